"""A corpus of real trainings for judging the drift verdict (issue 9).

Small models from real libraries (transformers' GPT-2, BERT, Qwen2, ViT, Qwen2-MoE, T5,
GPT-NeoX, ConvNeXt, Swin, Mixtral, OPT, BLOOM, Mamba, Gemma, MobileNetV2, Falcon, ELECTRA,
RWKV, EfficientNet, Wav2Vec2, Phi, DeBERTa-v2, ResNet, SegFormer, Whisper's encoder, CodeGen,
RegNet, BART and Funnel Transformer; a torch.nn CNN with BatchNorm and a torch.nn LSTM language
model) trained on the CPU with
real optimizers and schedules. Healthy reruns differ from their reference only through real
sources of nondeterminism (intra-op thread count, gradient-accumulation split, micro-batch
order, oneDNN on/off, channels-last kernels); faulty runs add one fault (a scaled output
channel, a corrupted optimizer lane, a bit flip in a weight or in optimizer state, one faulty
data-parallel rank over gloo).

Runs are cached under .cache/trainings/, one folder per run spec; nothing binary is in git.
"""
