"""The architectures, scaled down to train in seconds on a CPU, and their synthetic data.

Language models read sequences from a fixed random Markov chain (so the loss really falls);
image and audio models read class prototypes plus noise. The data depend only on the family
seed, so every run of a family sees the same batches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import nn

VOCAB, SEQ, BATCH = 128, 32, 16
IMAGE, CLASSES = 16, 10
WAVE = 320  # audio samples: 31 frames after the feature encoder
MELS, FRAMES = 16, 32  # log-mel features: 16 bins, 32 frames (16 after Whisper's strided conv)
SERIES, CONTEXT, HORIZON = 4, 32, 8  # time series: 4 channels, 32 steps seen, 8 forecast
HOP, BINS, NOISE = 16, 17, 16  # vocoder: 16 samples a frame, 17 bins, 16 noise values a frame
STATE, ACT, EPISODE = 8, 3, 10  # control: 8 state values, 3 action values, 10 steps an episode
CLIP = 4  # video: 4 frames a clip


@dataclass(frozen=True)
class Arch:
    name: str
    build: Callable[[], nn.Module]
    batches: Callable[[int], Iterator[torch.Tensor | tuple[torch.Tensor, torch.Tensor]]]
    loss: Callable[[nn.Module, object, int], torch.Tensor]  # summed loss over the micro-batch
    # Modules whose output channel a compute fault scales, by where they sit.
    sites: dict[str, str]
    # The parameter of the MLP (or late conv) site an optimizer-lane fault strikes.
    lane_weight: str = "weight"
    # BatchNorm sees the micro-batches: the accumulation split and order are part of the
    # model's maths, not round-off, so its healthy reruns vary only the kernels.
    batchnorm: bool = False


def _hf_quiet() -> None:
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()


def _gpt2() -> nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    _hf_quiet()
    cfg = GPT2Config(
        n_embd=64, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=SEQ,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return GPT2LMHeadModel(cfg)


def _bert() -> nn.Module:
    from transformers import BertConfig, BertForMaskedLM

    _hf_quiet()
    cfg = BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return BertForMaskedLM(cfg)


def _qwen2() -> nn.Module:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    _hf_quiet()
    cfg = Qwen2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ,
        tie_word_embeddings=False,
    )  # fmt: skip
    return Qwen2ForCausalLM(cfg)


def _moe() -> nn.Module:
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    _hf_quiet()
    cfg = Qwen2MoeConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, moe_intermediate_size=64, shared_expert_intermediate_size=64,
        num_experts=4, num_experts_per_tok=2, vocab_size=VOCAB, max_position_embeddings=SEQ,
        decoder_sparse_step=1,
    )  # fmt: skip
    return Qwen2MoeForCausalLM(cfg)


def _vit() -> nn.Module:
    from transformers import ViTConfig, ViTForImageClassification

    _hf_quiet()
    cfg = ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=IMAGE, patch_size=4, num_channels=3, num_labels=CLASSES,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return ViTForImageClassification(cfg)


def _t5() -> nn.Module:
    from transformers import T5Config, T5ForConditionalGeneration

    _hf_quiet()
    # Encoder-decoder, relative position buckets instead of positions, no biases, RMS norms,
    # input and output embeddings tied.
    cfg = T5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
        vocab_size=VOCAB, dropout_rate=0.0, relative_attention_num_buckets=8,
        relative_attention_max_distance=SEQ // 2, decoder_start_token_id=0, pad_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return T5ForConditionalGeneration(cfg)


def _neox() -> nn.Module:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    _hf_quiet()
    # One fused query_key_value projection with a bias, rotary on a quarter of each head,
    # attention and MLP side by side on the same input (parallel residual).
    cfg = GPTNeoXConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, rotary_pct=0.25,
        use_parallel_residual=True, hidden_dropout=0.0, attention_dropout=0.0,
        tie_word_embeddings=False,
    )  # fmt: skip
    return GPTNeoXForCausalLM(cfg)


def _convnext() -> nn.Module:
    from transformers import ConvNextConfig, ConvNextForImageClassification

    _hf_quiet()
    # Depthwise 7x7 convolutions, LayerNorm over channels (no BatchNorm: the accumulation
    # split is round-off here), pointwise MLPs, layer scale.
    cfg = ConvNextConfig(
        num_channels=3, patch_size=2, num_stages=2, hidden_sizes=[16, 32], depths=[2, 2],
        image_size=IMAGE, num_labels=CLASSES, drop_path_rate=0.0,
    )  # fmt: skip
    return ConvNextForImageClassification(cfg)


def _swin() -> nn.Module:
    from transformers import SwinConfig, SwinForImageClassification

    _hf_quiet()
    # Attention inside 4x4 windows (shifted every other block) with a relative position bias
    # table, patch merging between the stages.
    cfg = SwinConfig(
        image_size=IMAGE, patch_size=2, num_channels=3, embed_dim=32, depths=[2, 2],
        num_heads=[2, 4], window_size=4, mlp_ratio=2.0, drop_path_rate=0.0,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return SwinForImageClassification(cfg)


def _mixtral() -> nn.Module:
    from transformers import MixtralConfig, MixtralForCausalLM

    _hf_quiet()
    # Sparse MoE without a shared expert: a top-2 router over four experts whose weights are
    # fused into one (experts, out, in) tensor per projection.
    cfg = MixtralConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, num_local_experts=4, num_experts_per_tok=2, vocab_size=VOCAB,
        max_position_embeddings=SEQ, tie_word_embeddings=False,
    )  # fmt: skip
    return MixtralForCausalLM(cfg)


def _opt() -> nn.Module:
    from transformers import OPTConfig, OPTForCausalLM

    _hf_quiet()
    # ReLU MLP, learned absolute positions, biases on every projection, pre-norm LayerNorm,
    # tied input and output embeddings.
    cfg = OPTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
        word_embed_proj_dim=64, vocab_size=VOCAB, max_position_embeddings=SEQ,
        activation_function="relu", do_layer_norm_before=True, dropout=0.0,
        attention_dropout=0.0, pad_token_id=1, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return OPTForCausalLM(cfg)


def _bloom() -> nn.Module:
    from transformers import BloomConfig, BloomForCausalLM

    _hf_quiet()
    # ALiBi position biases (no position embedding at all), one fused query_key_value
    # projection, a LayerNorm on the word embeddings, tied embeddings.
    cfg = BloomConfig(
        hidden_size=64, n_layer=2, n_head=4, vocab_size=VOCAB, hidden_dropout=0.0,
        attention_dropout=0.0,
    )  # fmt: skip
    return BloomForCausalLM(cfg)


def _mamba() -> nn.Module:
    from transformers import MambaConfig, MambaForCausalLM

    _hf_quiet()
    # A selective state-space model: no attention, a causal depthwise conv1d and an
    # input-dependent scan inside a gated MLP; the pure-torch path (no mamba_ssm kernels).
    cfg = MambaConfig(
        hidden_size=64, num_hidden_layers=2, vocab_size=VOCAB, state_size=8, expand=2,
        conv_kernel=4, use_mambapy=False,
    )  # fmt: skip
    return MambaForCausalLM(cfg)


def _gemma() -> nn.Module:
    from transformers import GemmaConfig, GemmaForCausalLM

    _hf_quiet()
    # GeGLU MLP, RMS norms scaling by 1 + weight, multi-query attention (one key/value head),
    # embeddings scaled by sqrt(hidden) and tied to the output.
    cfg = GemmaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
        head_dim=16, intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ,
    )  # fmt: skip
    return GemmaForCausalLM(cfg)


def _mobilenet() -> nn.Module:
    from transformers import MobileNetV2Config, MobileNetV2ForImageClassification

    _hf_quiet()
    # Inverted residuals: 1x1 expansion, depthwise 3x3, linear 1x1 projection, BatchNorm and
    # ReLU6 after every convolution.
    cfg = MobileNetV2Config(
        num_channels=3, image_size=IMAGE, depth_multiplier=0.35, num_labels=CLASSES,
        classifier_dropout_prob=0.0,
    )  # fmt: skip
    return MobileNetV2ForImageClassification(cfg)


def _falcon() -> nn.Module:
    from transformers import FalconConfig, FalconForCausalLM

    _hf_quiet()
    # Attention and MLP side by side behind one shared LayerNorm (parallel block), multi-query
    # attention (one key/value head fused into query_key_value), rotary, no biases anywhere.
    cfg = FalconConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=VOCAB,
        max_position_embeddings=SEQ, multi_query=True, parallel_attn=True, bias=False,
        new_decoder_architecture=False, alibi=False, hidden_dropout=0.0, attention_dropout=0.0,
    )  # fmt: skip
    return FalconForCausalLM(cfg)


def _electra() -> nn.Module:
    from transformers import ElectraConfig, ElectraForMaskedLM

    _hf_quiet()
    # ELECTRA's generator: a post-norm encoder reading factorised embeddings (32 wide, projected
    # to the 64-wide hidden state), an MLM head that maps back to 32 and ties to them.
    cfg = ElectraConfig(
        embedding_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return ElectraForMaskedLM(cfg)


def _rwkv() -> nn.Module:
    from transformers import RwkvConfig, RwkvForCausalLM

    _hf_quiet()
    # A linear-attention RNN: token shift, a per-channel time decay and bonus in the WKV
    # recurrence (transformers' CPU loop), receptance gates, a squared-ReLU channel mix.
    cfg = RwkvConfig(
        hidden_size=64, num_hidden_layers=2, vocab_size=VOCAB, context_length=SEQ,
        attention_hidden_size=64, intermediate_size=128, tie_word_embeddings=False,
    )  # fmt: skip
    return RwkvForCausalLM(cfg)


def _efficientnet() -> nn.Module:
    from transformers import EfficientNetConfig, EfficientNetForImageClassification

    _hf_quiet()
    # MBConv blocks: 1x1 expansion, depthwise convolution, squeeze-and-excite, linear 1x1
    # projection; BatchNorm and SiLU (swish); three stages of EfficientNet-B0's first ones.
    cfg = EfficientNetConfig(
        num_channels=3, image_size=IMAGE, width_coefficient=0.5, depth_coefficient=1.0,
        kernel_sizes=[3, 3, 5], in_channels=[32, 16, 24], out_channels=[16, 24, 40],
        strides=[1, 2, 2], num_block_repeats=[1, 2, 2], expand_ratios=[1, 6, 6],
        hidden_dim=640, num_labels=CLASSES, dropout_rate=0.0, drop_connect_rate=0.0,
    )  # fmt: skip
    model = EfficientNetForImageClassification(cfg)
    # transformers draws EfficientNet's BatchNorm scales from N(0, 0.02) (pretrained weights
    # replace them in real use): each of its 16 norms then shrinks the signal ~50x, the
    # classifier reads ~1e-17 and the net does not learn (rotation 5's first EfficientNet
    # corpus). Scales of 1, shifts of 0, as torch, timm and the paper start them.
    for norm in model.modules():
        if isinstance(norm, nn.BatchNorm2d):
            norm.reset_parameters()
    return model


def _wav2vec2() -> nn.Module:
    from transformers import Wav2Vec2Config, Wav2Vec2ForSequenceClassification

    _hf_quiet()
    # An audio encoder: a strided conv1d feature encoder (GroupNorm on its first layer),
    # a feature projection, a grouped convolutional position embedding (weight-normed), a
    # post-norm transformer, mean pooling. SpecAugment and LayerDrop off: both draw randoms.
    cfg = Wav2Vec2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), feat_extract_norm="group",
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, classifier_proj_size=32,
        num_labels=CLASSES, hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
        feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return Wav2Vec2ForSequenceClassification(cfg)


def _phi() -> nn.Module:
    from transformers import PhiConfig, PhiForCausalLM

    _hf_quiet()
    # Attention and MLP side by side behind one LayerNorm (parallel block), rotary on half of
    # each head, biases on every projection (q, k, v, dense, fc1, fc2, lm_head), GELU MLP.
    cfg = PhiConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, partial_rotary_factor=0.5,
        resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0, tie_word_embeddings=False,
    )  # fmt: skip
    return PhiForCausalLM(cfg)


def _deberta() -> nn.Module:
    from transformers import DebertaV2Config, DebertaV2ForMaskedLM

    _hf_quiet()
    # DeBERTa-v2: disentangled attention (content-to-position and position-to-content terms
    # over log-bucketed relative positions, keys shared with the content projections), no
    # absolute position embedding in the input, post-norm encoder, tied MLM head.
    cfg = DebertaV2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, relative_attention=True,
        position_buckets=8, max_relative_positions=SEQ, pos_att_type=["p2c", "c2p"],
        position_biased_input=False, share_att_key=True, norm_rel_ebd="layer_norm",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, type_vocab_size=0,
    )  # fmt: skip
    return DebertaV2ForMaskedLM(cfg)


def _resnet() -> nn.Module:
    from transformers import ResNetConfig, ResNetForImageClassification

    _hf_quiet()
    # ResNet-18's basic blocks: two 3x3 convolutions with BatchNorm and an identity shortcut
    # (a strided 1x1 convolution with BatchNorm where the shape changes), a 7x7 stem with
    # max pooling, global average pooling.
    cfg = ResNetConfig(
        num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[2, 2],
        layer_type="basic", num_labels=CLASSES, downsample_in_first_stage=False,
    )  # fmt: skip
    return ResNetForImageClassification(cfg)


def _segformer() -> nn.Module:
    from transformers import SegformerConfig, SegformerForImageClassification

    _hf_quiet()
    # SegFormer's Mix Transformer: overlapping strided-conv patch embeddings per stage,
    # attention whose keys and values come from a map shrunk by a strided conv (spatial
    # reduction), a Mix-FFN with a depthwise 3x3 conv between its projections, no positions.
    cfg = SegformerConfig(
        num_channels=3, num_encoder_blocks=2, depths=[2, 2], sr_ratios=[2, 1],
        hidden_sizes=[32, 64], patch_sizes=[3, 3], strides=[2, 2], num_attention_heads=[2, 4],
        mlp_ratios=[2, 2], hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0, drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return SegformerForImageClassification(cfg)


def _whisper() -> nn.Module:
    from transformers import WhisperConfig, WhisperForAudioClassification

    _hf_quiet()
    # Whisper's encoder: two conv1d layers over log-mel frames (the second strided), fixed
    # sinusoidal positions (not trained), a pre-norm transformer whose key projection has no
    # bias, then a projection and mean pooling for the class.
    cfg = WhisperConfig(
        num_mel_bins=MELS, d_model=64, encoder_layers=2, encoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128,
        max_source_positions=FRAMES // 2, classifier_proj_size=32, num_labels=CLASSES,
        vocab_size=VOCAB, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        encoder_layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return WhisperForAudioClassification(cfg)


def _codegen() -> nn.Module:
    from transformers import CodeGenConfig, CodeGenForCausalLM

    _hf_quiet()
    # CodeGen (GPT-J's block): one fused qkv projection without biases whose output is laid
    # out in model-parallel groups, rotary on the first 8 dims of each head (GPT-J's
    # interleaved pairs), attention and MLP side by side behind one LayerNorm.
    cfg = CodeGenConfig(
        n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_inner=128, vocab_size=VOCAB,
        n_positions=SEQ, n_ctx=SEQ, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=0, eos_token_id=0, tie_word_embeddings=False,
    )  # fmt: skip
    return CodeGenForCausalLM(cfg)


def _bart() -> nn.Module:
    from transformers import BartConfig, BartForConditionalGeneration

    _hf_quiet()
    # BART: encoder-decoder with learned positions (offset by 2), a LayerNorm on the
    # embeddings, post-norm layers with biases everywhere, GELU MLPs, one embedding shared
    # by encoder, decoder and head, and the head's final_logits_bias buffer.
    cfg = BartConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=VOCAB,
        max_position_embeddings=SEQ, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        decoder_start_token_id=0, pad_token_id=2, bos_token_id=0, eos_token_id=1,
        forced_eos_token_id=None,
    )  # fmt: skip
    return BartForConditionalGeneration(cfg)


def _funnel() -> nn.Module:
    from transformers import FunnelConfig, FunnelForMaskedLM

    _hf_quiet()
    # Funnel Transformer: the sequence is mean-pooled to half its length between encoder
    # blocks (queries pooled, keys and values not), relative-position attention with its own
    # learned biases and segment terms, post-norm, then a decoder that upsamples back to full
    # length for the token predictions. Its default init (embeddings of std 1) starts the
    # loss near 50: initialised as BERT is instead.
    cfg = FunnelConfig(
        vocab_size=VOCAB, block_sizes=[1, 1], num_decoder_layers=1, d_model=64, n_head=4,
        d_head=16, d_inner=128, hidden_dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, max_position_embeddings=SEQ, initializer_range=0.02,
        initializer_std=0.02,
    )  # fmt: skip
    return FunnelForMaskedLM(cfg)


def _regnet() -> nn.Module:
    from transformers import RegNetConfig, RegNetForImageClassification

    _hf_quiet()
    # RegNetY: bottleneck blocks of 1x1, grouped 3x3 (groups of 8 channels), squeeze-and-
    # excitation, 1x1, each conv followed by BatchNorm; a strided 3x3 stem, no max pooling.
    cfg = RegNetConfig(
        num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[2, 2],
        groups_width=8, layer_type="y", num_labels=CLASSES,
    )  # fmt: skip
    return RegNetForImageClassification(cfg)


def _albert() -> nn.Module:
    from transformers import AlbertConfig, AlbertForMaskedLM

    _hf_quiet()
    # ALBERT: one transformer layer whose weights every layer shares (both of its two layers
    # are the same module, called twice), factorised embeddings (32 wide, mapped to the
    # 64-wide hidden state), post-norm, an MLM head tied to the word embeddings.
    cfg = AlbertConfig(
        embedding_size=32, hidden_size=64, num_hidden_layers=2, num_hidden_groups=1,
        num_attention_heads=4, intermediate_size=128, vocab_size=VOCAB,
        max_position_embeddings=SEQ, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
    )  # fmt: skip
    return AlbertForMaskedLM(cfg)


def _fnet() -> nn.Module:
    from transformers import FNetConfig, FNetForMaskedLM

    _hf_quiet()
    # FNet: no attention at all: each layer mixes tokens by the real part of a 2-d Fourier
    # transform over sequence and hidden dims (no weights), then a post-norm MLP; the
    # embeddings are summed, normed and projected by a Linear before the first mixing.
    cfg = FNetConfig(
        hidden_size=64, num_hidden_layers=2, intermediate_size=128, vocab_size=VOCAB,
        max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        use_tpu_fourier_optimizations=False,
    )  # fmt: skip
    return FNetForMaskedLM(cfg)


def _recurrent_gemma() -> nn.Module:
    from transformers import RecurrentGemmaConfig, RecurrentGemmaForCausalLM

    _hf_quiet()
    # RecurrentGemma (Griffin): a recurrent block (two input projections, a causal depthwise
    # conv1d and the RG-LRU, a gated diagonal linear recurrence whose gates are per-head
    # block-diagonal weights) then a local multi-query attention block over a window of 16,
    # gated GELU MLPs, RMS norms scaling by 1 + weight, logits soft-capped.
    cfg = RecurrentGemmaConfig(
        hidden_size=64, num_hidden_layers=2, block_types=["recurrent", "attention"],
        num_attention_heads=4, num_key_value_heads=1, head_dim=16, intermediate_size=128,
        lru_width=64, attention_window_size=16, conv1d_width=4, vocab_size=VOCAB,
    )  # fmt: skip
    return RecurrentGemmaForCausalLM(cfg)


def _swiftformer() -> nn.Module:
    from transformers import SwiftFormerConfig, SwiftFormerForImageClassification

    _hf_quiet()
    # SwiftFormer: a conv stem, then per stage a conv encoder (depthwise 3x3, BatchNorm,
    # pointwise MLP, layer scale) and a block whose attention is "efficient additive": one
    # learned vector scores the queries into a single global query, no key-query matrix;
    # BatchNorm throughout, and a classification and a distillation head averaged.
    cfg = SwiftFormerConfig(
        image_size=IMAGE, num_channels=3, depths=[2, 2], embed_dims=[16, 32], mlp_ratio=2,
        downsamples=[True, True], drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return SwiftFormerForImageClassification(cfg)


def _poolformer() -> nn.Module:
    from transformers import PoolFormerConfig, PoolFormerForImageClassification

    _hf_quiet()
    # PoolFormer (MetaFormer): the token mixer is a 3x3 average pool minus its input (no
    # weights), the MLP is two 1x1 convolutions, the norms are GroupNorm with one group
    # (over channels and space at once), every branch has a learned layer scale.
    cfg = PoolFormerConfig(
        num_channels=3, depths=[2, 2], hidden_sizes=[16, 32], num_encoder_blocks=2,
        patch_sizes=[3, 3], strides=[2, 2], padding=[1, 1], mlp_ratio=2.0,
        drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return PoolFormerForImageClassification(cfg)


def _bigcode() -> nn.Module:
    from transformers import GPTBigCodeConfig, GPTBigCodeForCausalLM

    _hf_quiet()
    # GPT-BigCode (StarCoder's block): multi-query attention, one fused c_attn Linear giving
    # all the queries and a single key and value head, learned absolute positions, GPT-2's
    # pre-norm layout with biases everywhere, tied embeddings.
    cfg = GPTBigCodeConfig(
        n_embd=64, n_layer=2, n_head=4, n_inner=128, vocab_size=VOCAB, n_positions=SEQ,
        multi_query=True, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
        eos_token_id=0,
    )  # fmt: skip
    return GPTBigCodeForCausalLM(cfg)


def _convbert() -> nn.Module:
    from transformers import ConvBertConfig, ConvBertForMaskedLM

    _hf_quiet()
    # ConvBERT: half of each layer's heads are self-attention, the other half span-based
    # dynamic convolutions (a separable conv1d over the keys predicts a 5-wide kernel per
    # token, applied to the unfolded values); post-norm, an MLM head tied to the embeddings.
    cfg = ConvBertConfig(
        embedding_size=64, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, head_ratio=2, conv_kernel_size=5, num_groups=1,
        vocab_size=VOCAB, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return ConvBertForMaskedLM(cfg)


def _pegasus() -> nn.Module:
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    _hf_quiet()
    # Pegasus: encoder-decoder with fixed sinusoidal positions (frozen, not trained), pre-norm
    # layers (BART's are post-norm) closed by a final LayerNorm per stack, embeddings scaled
    # by sqrt(d_model) and shared by encoder, decoder and head.
    cfg = PegasusConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=VOCAB,
        max_position_embeddings=SEQ, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        decoder_start_token_id=0, pad_token_id=2, eos_token_id=1, forced_eos_token_id=None,
    )  # fmt: skip
    return PegasusForConditionalGeneration(cfg)


def _mobilevit() -> nn.Module:
    from transformers import MobileViTConfig, MobileViTForImageClassification

    _hf_quiet()
    # MobileViT: MobileNetV2 inverted residuals (BatchNorm, SiLU), and in its later stages a
    # block that unfolds the map into 2x2 patches, runs a small pre-norm transformer across
    # the patches (pixels at the same place in each patch attend to each other), folds them
    # back and fuses the result with its input by a 3x3 convolution.
    cfg = MobileViTConfig(
        image_size=IMAGE, num_channels=3, patch_size=2, hidden_sizes=[32, 48, 64],
        neck_hidden_sizes=[8, 16, 24, 32, 48, 64, 96], num_attention_heads=2, mlp_ratio=2.0,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
        num_labels=CLASSES,
    )  # fmt: skip
    return MobileViTForImageClassification(cfg)


def _nystromformer() -> nn.Module:
    from transformers import NystromformerConfig, NystromformerForMaskedLM

    _hf_quiet()
    # Nystromformer: softmax attention approximated through 8 landmarks (segment means of the
    # queries and keys) and an iterative Moore-Penrose pseudo-inverse of the landmark kernel,
    # plus a depthwise conv over the values as a skip; BERT's post-norm layout otherwise.
    cfg = NystromformerConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ + 2, num_landmarks=8,
        segment_means_seq_len=SEQ, conv_kernel_size=9, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return NystromformerForMaskedLM(cfg)


def _perceiver() -> nn.Module:
    from transformers import PerceiverConfig, PerceiverForMaskedLM

    _hf_quiet()
    # Perceiver IO: 16 learned latents cross-attend once to the tokens, self-attend among
    # themselves (the tokens never attend to each other), then one query per output position
    # cross-attends to the latents to decode; pre-norm everywhere, queries and keys normed
    # apart, logits from the input embedding transposed.
    cfg = PerceiverConfig(
        num_latents=16, d_latents=64, d_model=64, num_blocks=1, num_self_attends_per_block=2,
        num_self_attention_heads=4, num_cross_attention_heads=1, vocab_size=VOCAB,
        max_position_embeddings=SEQ, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return PerceiverForMaskedLM(cfg)


def _patchtst() -> nn.Module:
    from transformers import PatchTSTConfig, PatchTSTForPrediction

    _hf_quiet()
    # PatchTST: a forecaster. Each series is standardised, cut into patches of 4 steps, each
    # patch projected to a token; every channel runs through the same post-norm transformer
    # on its own (channel independence), a linear head maps the flattened tokens to the
    # forecast, which is de-standardised.
    cfg = PatchTSTConfig(
        num_input_channels=SERIES, context_length=CONTEXT, prediction_length=HORIZON,
        patch_length=4, patch_stride=4, d_model=32, num_hidden_layers=2, num_attention_heads=4,
        ffn_dim=64, norm_type="layernorm", dropout=0.0, attention_dropout=0.0, ff_dropout=0.0,
        path_dropout=0.0, head_dropout=0.0, positional_dropout=0.0,
    )  # fmt: skip
    return PatchTSTForPrediction(cfg)


def _dinov2() -> nn.Module:
    from transformers import Dinov2Config, Dinov2ForImageClassification

    _hf_quiet()
    # DINOv2's ViT: pre-norm layers whose two branches are each scaled by a learned per-channel
    # layer scale, a SwiGLU MLP, a class token plus interpolated learned positions, and a
    # classifier reading the class token next to the mean of the patch tokens.
    cfg = Dinov2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2,
        image_size=IMAGE, patch_size=4, num_channels=3, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, layerscale_value=1.0, drop_path_rate=0.0,
        use_swiglu_ffn=True, num_labels=CLASSES,
    )  # fmt: skip
    return Dinov2ForImageClassification(cfg)


def _levit() -> nn.Module:
    from transformers import LevitConfig, LevitForImageClassification

    _hf_quiet()
    # LeViT: a stem of four 3x3 convolutions (BatchNorm, Hardswish), then attention stages
    # whose every Linear is followed by a BatchNorm (no LayerNorm anywhere), attention biases
    # learned per relative offset, an attention block that subsamples the queries between the
    # stages, and Hardswish MLPs. Stride 1 in the stem: 16x16 images stay 16x16 tokens.
    cfg = LevitConfig(
        image_size=IMAGE, num_channels=3, kernel_size=3, stride=1, padding=1, patch_size=1,
        hidden_sizes=[32, 48, 64], num_attention_heads=[2, 3, 4], depths=[2, 1, 1],
        key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2], drop_path_rate=0,
        num_labels=CLASSES,
    )  # fmt: skip
    return LevitForImageClassification(cfg)


def _squeezebert() -> nn.Module:
    from transformers import SqueezeBertConfig, SqueezeBertForMaskedLM

    _hf_quiet()
    # SqueezeBERT: BERT's post-norm layout on (batch, channels, time) maps, every projection
    # a 1x1 conv1d, the query, key, value and MLP ones grouped (4 groups: each output channel
    # reads a quarter of the input channels).
    cfg = SqueezeBertConfig(
        vocab_size=VOCAB, hidden_size=64, embedding_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, max_position_embeddings=SEQ,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, q_groups=4, k_groups=4,
        v_groups=4, post_attention_groups=1, intermediate_groups=4, output_groups=4,
    )  # fmt: skip
    return SqueezeBertForMaskedLM(cfg)


def _gpt_neo() -> nn.Module:
    from transformers import GPTNeoConfig, GPTNeoForCausalLM

    _hf_quiet()
    # GPT-Neo: layers alternating global causal attention and local attention within a
    # window of 8 tokens, separate q/k/v projections without biases, no scaling of the
    # attention scores, learned absolute positions.
    cfg = GPTNeoConfig(
        vocab_size=VOCAB, max_position_embeddings=SEQ, hidden_size=64, num_layers=2,
        num_heads=4, intermediate_size=128, attention_types=[[["global", "local"], 1]],
        window_size=8, embed_dropout=0.0, attention_dropout=0.0, resid_dropout=0.0,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return GPTNeoForCausalLM(cfg)


def _jamba() -> nn.Module:
    from transformers import JambaConfig, JambaForCausalLM

    _hf_quiet()
    # Jamba: a hybrid; layer 0 is an attention layer (grouped-query, no positions at all)
    # with a dense SwiGLU MLP, layer 1 a Mamba mixer with a top-2 mixture of four experts.
    cfg = JambaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
        attn_layer_period=2, attn_layer_offset=0, expert_layer_period=2, expert_layer_offset=1,
        mamba_d_state=8, mamba_d_conv=4, mamba_expand=2, use_mamba_kernels=False,
        max_position_embeddings=SEQ, tie_word_embeddings=False, pad_token_id=None,
    )  # fmt: skip
    return JambaForCausalLM(cfg)


def _esm() -> nn.Module:
    from transformers import EsmConfig, EsmForMaskedLM

    _hf_quiet()
    # ESM-2: a protein language model; BERT's masked LM with rotary positions on the queries
    # and keys, pre-norm layers, a final LayerNorm after the stack and no token-type input.
    cfg = EsmConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=SEQ + 2,
        position_embedding_type="rotary", hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, token_dropout=False, emb_layer_norm_before=False,
        mask_token_id=1, pad_token_id=0,
    )  # fmt: skip
    return EsmForMaskedLM(cfg)


def _prophetnet() -> nn.Module:
    from transformers import ProphetNetConfig, ProphetNetForConditionalGeneration

    _hf_quiet()
    # ProphetNet: an encoder-decoder whose decoder runs a main stream and a second, n-gram
    # stream side by side through one shared self-attention, the n-gram stream predicting a
    # token further ahead from learned n-gram embeddings, with relative position buckets;
    # post-norm layers with learned absolute positions in the encoder. Trained on its main
    # stream's loss alone (transformers' disable_ngram_loss): with the n-gram stream scored
    # too, the loss stayed at chance over the 120 steps on these chains.
    cfg = ProphetNetConfig(
        vocab_size=VOCAB, hidden_size=64, encoder_ffn_dim=128, decoder_ffn_dim=128,
        num_encoder_layers=2, num_decoder_layers=2, num_encoder_attention_heads=4,
        num_decoder_attention_heads=4, max_position_embeddings=SEQ, ngram=2, num_buckets=8,
        relative_max_distance=SEQ // 2, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return ProphetNetForConditionalGeneration(cfg)


def _olmo2() -> nn.Module:
    from transformers import Olmo2Config, Olmo2ForCausalLM

    _hf_quiet()
    # OLMo 2: the norms moved behind the sublayers (each branch's output is RMS-normed before
    # it joins the residual stream, no norm in front of attention or MLP), RMS norms over the
    # whole query and key widths, rotary positions, a SwiGLU MLP.
    cfg = Olmo2Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ,
        tie_word_embeddings=False, pad_token_id=None, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return Olmo2ForCausalLM(cfg)


def _reformer() -> nn.Module:
    from transformers import ReformerConfig, ReformerForMaskedLM

    _hf_quiet()
    # Reformer: reversible residual layers (the backward pass recomputes each layer's
    # activations from its outputs instead of storing them), chunked local attention
    # (chunks of 8 tokens attending to themselves and their neighbours), axial position
    # embeddings factored over a 4x8 grid, pre-norm.
    cfg = ReformerConfig(
        vocab_size=VOCAB, hidden_size=64, num_attention_heads=4, attention_head_size=16,
        attn_layers=["local", "local"], feed_forward_size=128, axial_pos_embds=True,
        axial_pos_shape=[4, 8], axial_pos_embds_dim=[32, 32], max_position_embeddings=SEQ,
        local_attn_chunk_length=8, local_num_chunks_before=1, local_num_chunks_after=1,
        is_decoder=False, hidden_dropout_prob=0.0, local_attention_probs_dropout_prob=0.0,
        lsh_attention_probs_dropout_prob=0.0, pad_token_id=0, eos_token_id=1,
        chunk_size_lm_head=0, chunk_size_feed_forward=0,
    )  # fmt: skip
    return ReformerForMaskedLM(cfg)


def _cvt() -> nn.Module:
    from transformers import CvtConfig, CvtForImageClassification

    _hf_quiet()
    # CvT: overlapping convolutional token embeddings at each stage, and queries, keys and
    # values each made by a depthwise 3x3 convolution with BatchNorm (keys and values
    # strided 2) before their Linear projections; no position embedding; a class token in
    # the last stage only.
    cfg = CvtConfig(
        num_channels=3, patch_sizes=[3, 3], patch_stride=[2, 2], patch_padding=[1, 1],
        embed_dim=[32, 64], num_heads=[2, 4], depth=[2, 2], mlp_ratio=[2.0, 2.0],
        attention_drop_rate=[0.0, 0.0], drop_rate=[0.0, 0.0], drop_path_rate=[0.0, 0.0],
        qkv_bias=[True, True], cls_token=[False, True], qkv_projection_method=["dw_bn", "dw_bn"],
        kernel_qkv=[3, 3], padding_kv=[1, 1], stride_kv=[2, 2], padding_q=[1, 1],
        stride_q=[1, 1], num_labels=CLASSES,
    )  # fmt: skip
    return CvtForImageClassification(cfg)


def _focalnet() -> nn.Module:
    from transformers import FocalNetConfig, FocalNetForImageClassification

    _hf_quiet()
    # FocalNet: no attention; focal modulation instead. One projection makes a query, a
    # context and gates; stacked depthwise convolutions (3x3, then 5x5) gather the context
    # at two levels plus a global average, gated and summed into a modulator that multiplies
    # the query. Pre-norm LayerNorm, patch-merging convolutions between the stages.
    cfg = FocalNetConfig(
        image_size=IMAGE, patch_size=2, num_channels=3, embed_dim=32, depths=[2, 2],
        focal_levels=[2, 2], focal_windows=[3, 3], mlp_ratio=2.0, drop_path_rate=0.0,
        hidden_dropout_prob=0.0, use_layerscale=False, num_labels=CLASSES,
    )  # fmt: skip
    return FocalNetForImageClassification(cfg)


def _persimmon() -> nn.Module:
    from transformers import PersimmonConfig, PersimmonForCausalLM

    _hf_quiet()
    # Persimmon: one fused query_key_value projection whose queries and keys are each
    # LayerNormed per head before rotary (on half of each head), a squared-ReLU MLP
    # (dense_h_to_4h, relu(x)**2, dense_4h_to_h), LayerNorms with biases, untied embeddings.
    cfg = PersimmonConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, qk_layernorm=True, hidden_dropout=0.0,
        attention_dropout=0.0, tie_word_embeddings=False, pad_token_id=0, bos_token_id=0,
        eos_token_id=0,
    )  # fmt: skip
    return PersimmonForCausalLM(cfg)


def _canine() -> nn.Module:
    from transformers import CanineConfig, CanineForTokenClassification

    _hf_quiet()
    # CANINE: a character-level encoder with no vocabulary. Each code point is hashed by four
    # hash functions into four small embedding tables whose slices are concatenated; a
    # one-layer local-attention transformer reads the characters, a strided convolution
    # downsamples them 4x into "molecules" for the deep post-norm stack (2 layers), and a
    # convolution over the characters concatenated with the upsampled molecules feeds a final
    # one-layer transformer. transformers has no MLM head for it: a token-classification head
    # over the 128 symbols plays that part (the masked loss reads its per-character logits).
    cfg = CanineConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=SEQ,
        downsampling_rate=4, upsampling_kernel_size=4, num_hash_functions=4,
        num_hash_buckets=64, local_transformer_stride=SEQ, num_labels=VOCAB,
    )  # fmt: skip
    return CanineForTokenClassification(cfg)


def _mobilenet_v1() -> nn.Module:
    from transformers import MobileNetV1Config, MobileNetV1ForImageClassification

    _hf_quiet()
    # MobileNetV1: a plain stack (no residuals) of 13 depthwise-separable blocks, each a
    # depthwise 3x3 and a pointwise 1x1 convolution, BatchNorm and ReLU6 after every one,
    # TensorFlow "SAME" padding; a quarter of the paper's widths (8 to 256 channels).
    cfg = MobileNetV1Config(
        num_channels=3, image_size=IMAGE, depth_multiplier=0.25, min_depth=8,
        num_labels=CLASSES, classifier_dropout_prob=0.0,
    )  # fmt: skip
    return MobileNetV1ForImageClassification(cfg)


def _autoformer() -> nn.Module:
    from transformers import AutoformerConfig, AutoformerForPrediction

    _hf_quiet()
    # Autoformer: a probabilistic forecaster (a Student-t head, trained by its likelihood).
    # Its attention is auto-correlation: queries and keys meet by FFT, the top lags' delays
    # roll the values; every layer splits its stream into a seasonal part and a trend
    # (moving average) by series decomposition, the decoder accumulating the trends. The
    # encoder reads lags 1-3 of the mean-scaled series plus a time feature.
    cfg = AutoformerConfig(
        prediction_length=HORIZON, context_length=CONTEXT - 3, input_size=SERIES,
        lags_sequence=[1, 2, 3], num_time_features=1, d_model=32, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_layers=2, decoder_layers=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
        attention_dropout=0.0, activation_dropout=0.0, label_length=8, moving_average=5,
        autocorrelation_factor=1,
    )  # fmt: skip
    return AutoformerForPrediction(cfg)


def _hiera() -> nn.Module:
    from transformers import HieraConfig, HieraForImageClassification

    _hf_quiet()
    # Hiera: a hierarchical ViT stripped of convolutions, relative biases and shifted windows.
    # Stage 0 attends only inside 4x4-token mask units (one fused qkv); stage 1 starts by
    # max-pooling its queries 2x2 (and projecting the residual wider), then attends globally.
    # Learned absolute positions, pre-norm LayerNorm, mean pooling.
    cfg = HieraConfig(
        embed_dim=32, image_size=[IMAGE, IMAGE], patch_size=[3, 3], patch_stride=[2, 2],
        patch_padding=[1, 1], mlp_ratio=2.0, depths=[2, 2], num_heads=[2, 4],
        num_query_pool=1, query_stride=[2, 2], masked_unit_size=[4, 4],
        masked_unit_attention=[True, False], drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return HieraForImageClassification(cfg)


def _led() -> nn.Module:
    from transformers import LEDConfig, LEDForConditionalGeneration

    _hf_quiet()
    # LED (Longformer encoder-decoder): BART's post-norm encoder-decoder whose encoder attends
    # only inside a sliding window (8 tokens: each sees 4 either side) through Longformer's
    # banded attention, with separate query/key/value projections kept for global tokens
    # (none here); the decoder attends fully. One embedding shared by both and the head.
    cfg = LEDConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=VOCAB,
        max_encoder_position_embeddings=SEQ, max_decoder_position_embeddings=SEQ,
        attention_window=8, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        decoder_start_token_id=0, pad_token_id=2, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return LEDForConditionalGeneration(cfg)


def _diffllama() -> nn.Module:
    from transformers import DiffLlamaConfig, DiffLlamaForCausalLM

    _hf_quiet()
    # DiffLlama (the Differential Transformer on Llama): each head's queries and keys are split
    # in two, and the head attends by the difference of the two softmax maps, the second
    # weighted by a learned lambda (re-parametrized by four vectors per layer), then an RMS
    # group norm per head; rotary positions, SwiGLU MLP, RMS norms, grouped keys and values.
    cfg = DiffLlamaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ,
        attention_dropout=0.0, tie_word_embeddings=False,
    )  # fmt: skip
    return DiffLlamaForCausalLM(cfg)


def _mpnet() -> nn.Module:
    from transformers import MPNetConfig, MPNetForMaskedLM

    _hf_quiet()
    # MPNet: BERT's post-norm masked LM with learned absolute positions (counted past the
    # padding index) plus a T5-style relative position bias shared by all layers (32 bucketed
    # distances, one table in the encoder), no token types; the head is tied to the embedding.
    # Its padding index is 1, the masked loss's mask token: masked tokens get neither a word
    # nor a position embedding (both rows are zero and frozen) and shift later positions.
    cfg = MPNetConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ + 2, relative_attention_num_buckets=32,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1,
    )  # fmt: skip
    return MPNetForMaskedLM(cfg)


def _beit() -> nn.Module:
    from transformers import BeitConfig, BeitForImageClassification

    _hf_quiet()
    # BEiT: a ViT with a learned relative position bias in every layer (over the 4x4 patch
    # grid, plus the class token), no absolute positions, layer scale on both residual
    # branches, no bias on the keys, and mean pooling of the patch tokens (then a LayerNorm).
    cfg = BeitConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=IMAGE, patch_size=4, num_channels=3, num_labels=CLASSES,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
        use_absolute_position_embeddings=False, use_relative_position_bias=True,
        use_mean_pooling=True, layer_scale_init_value=0.1,
    )  # fmt: skip
    return BeitForImageClassification(cfg)


def _hgnet_v2() -> nn.Module:
    from transformers import HGNetV2Config, HGNetV2ForImageClassification

    _hf_quiet()
    # HGNetV2 (PP-HGNetV2-B style): a four-conv stem with a max-pool branch, then stages of
    # HG blocks, each a chain of convolutions whose outputs are all concatenated and squeezed
    # by two 1x1 aggregation convolutions (the later stage's chain is "light": 1x1 then
    # depthwise), a strided depthwise convolution between the stages; BatchNorm after every
    # convolution and a learnable scale-and-bias after every ReLU.
    cfg = HGNetV2Config(
        num_channels=3, embedding_size=16, stem_channels=[3, 8, 16], hidden_sizes=[32, 64],
        depths=[2, 1], stage_in_channels=[16, 32], stage_mid_channels=[8, 16],
        stage_out_channels=[32, 64], stage_num_blocks=[2, 1], stage_numb_of_layers=[3, 3],
        stage_downsample=[False, True], stage_light_block=[False, True],
        stage_kernel_size=[3, 3], stage_downsample_strides=[2, 2],
        stage_names=["stem", "stage1", "stage2"], out_features=["stage2"], out_indices=[2],
        use_learnable_affine_block=True, num_labels=CLASSES,
    )  # fmt: skip
    return HGNetV2ForImageClassification(cfg)


def _switch() -> nn.Module:
    from transformers import SwitchTransformersConfig, SwitchTransformersForConditionalGeneration

    _hf_quiet()
    # Switch Transformer: T5's encoder-decoder (relative position buckets, RMS norms, no
    # biases, tied embeddings) whose every second MLP is a mixture of four ReLU experts with
    # top-1 routing: a float32 router picks one expert per token and scales its output by the
    # router probability. No router jitter (it would draw fresh noise every step) and an
    # expert capacity of the whole batch, so no token is ever dropped: the accumulation split
    # is round-off here, not a change of the maths. Expert modules are separate, unfused.
    cfg = SwitchTransformersConfig(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_sparse_encoder_layers=1,
        num_decoder_layers=2, num_sparse_decoder_layers=1, num_heads=4, num_experts=4,
        expert_capacity=BATCH * SEQ, router_jitter_noise=0.0, vocab_size=VOCAB,
        dropout_rate=0.0, relative_attention_num_buckets=8,
        relative_attention_max_distance=SEQ // 2, decoder_start_token_id=0, pad_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return SwitchTransformersForConditionalGeneration(cfg)


def _modernbert() -> nn.Module:
    from transformers import ModernBertConfig, ModernBertForMaskedLM

    _hf_quiet()
    # ModernBERT: a pre-norm masked LM with rotary positions, no biases, one fused Wqkv, a
    # GeGLU MLP whose input and gate come from one fused Wi, LayerNorm on the embeddings and
    # none in front of layer 0's attention; layers alternate global attention (layer 0) and
    # sliding-window attention (layer 1: 8 tokens, 4 either side). Its padding index is 1,
    # the masked loss's mask token (a zero, frozen embedding row, as MPNet's).
    cfg = ModernBertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ, global_attn_every_n_layers=2,
        local_attention=8, embedding_dropout=0.0, mlp_dropout=0.0, attention_dropout=0.0,
        pad_token_id=1, bos_token_id=0, eos_token_id=0, cls_token_id=0, sep_token_id=0,
    )  # fmt: skip
    return ModernBertForMaskedLM(cfg)


def _lfm2() -> nn.Module:
    from transformers import Lfm2Config, Lfm2ForCausalLM

    _hf_quiet()
    # LFM2: a hybrid decoder whose layers are either grouped-query attention (with RMS norms
    # on the queries and keys, rotary positions) or a gated short convolution: in_proj makes
    # three streams B, C and x, B*x runs through a causal depthwise conv1d (kernel 3), C gates
    # its output, out_proj closes it. Layer 0 attends, layer 1 convolves; both have a SwiGLU
    # MLP (w1 the gate, w3 the up projection, w2 the down), pre-norm RMS norms.
    cfg = Lfm2Config(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, block_auto_adjust_ff_dim=False, vocab_size=VOCAB,
        max_position_embeddings=SEQ, layer_types=["full_attention", "conv"], conv_L_cache=3,
        tie_word_embeddings=False,
    )  # fmt: skip
    return Lfm2ForCausalLM(cfg)


def _textnet() -> nn.Module:
    from transformers import TextNetConfig, TextNetForImageClassification

    _hf_quiet()
    # TextNet (FAST's backbone): a RepVGG-style plain net with no residual connections. Each
    # layer sums the BatchNormed outputs of parallel branches, its main convolution (3x3, 1x3
    # or 3x1 in turn), that kernel's column and row parts as convolutions of their own (where
    # the kernel is wider than 1 that way) and an identity BatchNorm (where the shapes allow),
    # then ReLU. A 2x2 average pool feeds the classifier. BatchNorm throughout.
    cfg = TextNetConfig(
        stem_kernel_size=3, stem_stride=2, stem_num_channels=3, stem_out_channels=16,
        stem_act_func="relu", hidden_sizes=[16, 16, 32],
        conv_layer_kernel_sizes=[[[3, 3], [1, 3], [3, 1]], [[3, 3], [3, 1], [1, 3]]],
        conv_layer_strides=[[1, 1, 1], [2, 1, 1]], image_size=[IMAGE, IMAGE],
        num_labels=CLASSES, out_features=["stage2"], out_indices=[2],
        stage_names=["stem", "stage1", "stage2"],
    )  # fmt: skip
    return TextNetForImageClassification(cfg)


def _patchtsmixer() -> nn.Module:
    from transformers import PatchTSMixerConfig, PatchTSMixerForPrediction

    _hf_quiet()
    # PatchTSMixer: an MLP-Mixer for time series. Each series is standardized and cut into
    # 7 overlapping patches of 8 steps, each patch a token; every layer mixes across the 4
    # channels, then across the patches (with a one-layer, two-head self-attention added
    # to that mixer), then across the features, each mixer a pre-norm MLP gated by a softmax
    # over its own output; a linear head forecasts from the flattened patches.
    cfg = PatchTSMixerConfig(
        context_length=CONTEXT, prediction_length=HORIZON, num_input_channels=SERIES,
        patch_length=8, patch_stride=4, d_model=32, num_layers=2, expansion_factor=2,
        dropout=0.0, head_dropout=0.0, mode="mix_channel", gated_attn=True, self_attn=True,
        self_attn_heads=2,
    )  # fmt: skip
    return PatchTSMixerForPrediction(cfg)


def _qwen3_next() -> nn.Module:
    from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

    _hf_quiet()
    # Qwen3-Next: a hybrid decoder whose layer 0 is a Gated DeltaNet (linear attention: one
    # fused in_proj_qkvz and in_proj_ba make queries, keys, values, an output gate z and the
    # per-head write strength beta and decay a; a causal depthwise conv1d (kernel 4) runs over
    # q, k and v; the state is updated by the gated delta rule, chunk by chunk, in torch; a
    # gated RMS norm closes it) and whose layer 1 is gated softmax attention (q_proj makes the
    # queries and a sigmoid output gate, RMS norms on queries and keys, rotary on a quarter of
    # each head). Every MLP is a mixture of four SwiGLU experts (top-2, fused) beside a
    # sigmoid-gated shared expert; zero-centred RMS norms (weight + 1), pre-norm throughout.
    cfg = Qwen3NextConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=16, intermediate_size=128, moe_intermediate_size=64,
        shared_expert_intermediate_size=64, num_experts=4, num_experts_per_tok=2,
        linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
        linear_num_key_heads=2, linear_num_value_heads=4, vocab_size=VOCAB,
        max_position_embeddings=SEQ, layer_types=["linear_attention", "full_attention"],
        tie_word_embeddings=False,
    )  # fmt: skip
    return Qwen3NextForCausalLM(cfg)


def _yoso() -> nn.Module:
    from transformers import YosoConfig, YosoForMaskedLM

    _hf_quiet()
    # YOSO: a post-norm masked LM whose attention is the expectation of LSH (Bernoulli)
    # sampling: unit-normalized queries and keys meet as (1 - arccos(q.k)/pi)^8 instead of a
    # softmax (the expectation, in torch, with its own approximate backward; no sampling, so
    # no randoms), the result normalized again; a depthwise convolution over each head's
    # values (window 5) is added to it. Absolute positions, tied embeddings.
    cfg = YosoConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=SEQ + 2, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, use_expectation=True, hash_code_len=8,
        conv_window=5,
    )  # fmt: skip
    return YosoForMaskedLM(cfg)


def _bit() -> nn.Module:
    from transformers import BitConfig, BitForImageClassification

    _hf_quiet()
    # BiT (Big Transfer): a pre-activation ResNet-v2 with no BatchNorm: every convolution is
    # weight-standardized (each output channel's kernel scaled to zero mean and unit
    # variance on every call) and every norm is a GroupNorm (four groups) fused with its
    # ReLU; bottleneck blocks (norm-ReLU-1x1, norm-ReLU-3x3, norm-ReLU-1x1) with a projection
    # shortcut where the shape changes, a 7x7 stem with a max-pool, a final GroupNorm.
    cfg = BitConfig(
        num_channels=3, embedding_size=16, hidden_sizes=[32, 64], depths=[2, 2],
        layer_type="preactivation", num_groups=4, drop_path_rate=0.0, num_labels=CLASSES,
        out_features=["stage2"], out_indices=[2], stage_names=["stem", "stage1", "stage2"],
    )  # fmt: skip
    return BitForImageClassification(cfg)


def _pp_lcnet() -> nn.Module:
    from transformers import PPLCNetConfig, PPLCNetForImageClassification

    _hf_quiet()
    # PP-LCNet: a plain stack of depthwise-separable blocks (depthwise 3x3 or 5x5, then
    # pointwise 1x1, each conv-BatchNorm-hardswish) with squeeze-and-excitation (hardsigmoid)
    # in the last stage's blocks, no residual connections; after the global pool a 1x1
    # convolution expands the features (hardswish, no norm) before the classifier.
    # BatchNorm throughout.
    cfg = PPLCNetConfig(
        block_configs=[[[3, 8, 16, 1, False]], [[3, 16, 32, 2, False], [3, 32, 32, 1, False]],
                       [[3, 32, 32, 1, False], [5, 32, 32, 1, False]],
                       [[5, 32, 64, 2, False], [5, 64, 64, 1, False]],
                       [[5, 64, 64, 1, True], [5, 64, 64, 1, True]]],
        stem_channels=8, stem_stride=2, class_expand=128, hidden_dropout_prob=0.0,
        num_labels=CLASSES,
    )  # fmt: skip
    return PPLCNetForImageClassification(cfg)


def _timesfm() -> nn.Module:
    from transformers import TimesFmConfig, TimesFmModelForPrediction

    _hf_quiet()
    # TimesFM: a decoder-only forecaster. Each series (one channel, univariate) is
    # standardized by its first patch's statistics and cut into 4 patches of 8 steps; a
    # residual MLP block (Linear-SiLU-Linear plus a linear shortcut, fed the patch and its
    # padding mask) makes each patch a token, sinusoidal positions and a frequency embedding
    # are added; causal attention with a learned per-dimension query scale, RMS norms, a ReLU
    # MLP with its own LayerNorm in front, and a residual MLP head forecasting the next 8
    # steps as a mean and nine quantiles from the last patch's token.
    cfg = TimesFmConfig(
        patch_length=8, context_length=CONTEXT, horizon_length=HORIZON, num_hidden_layers=2,
        hidden_size=32, intermediate_size=64, head_dim=16, num_attention_heads=2,
        use_positional_embedding=True, attention_dropout=0.0,
    )  # fmt: skip
    return TimesFmModelForPrediction(cfg)


def _informer() -> nn.Module:
    from transformers import InformerConfig, InformerForPrediction

    _hf_quiet()
    # Informer: an encoder-decoder forecaster (a Student-t head, trained by its likelihood),
    # whose self-attention is ProbSparse: each query is scored against a sample of the keys
    # (max minus mean of its sampled scores), only the top-u queries (u = 2 ceil(ln(1 + L))) attend,
    # the others take the mean of the values. Its distilling convolutions (with BatchNorm)
    # are off. The encoder reads lags 1-3 of the mean-scaled series plus a time feature.
    cfg = InformerConfig(
        prediction_length=HORIZON, context_length=CONTEXT - 3, input_size=SERIES,
        lags_sequence=[1, 2, 3], num_time_features=1, d_model=32, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_layers=2, decoder_layers=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
        attention_dropout=0.0, activation_dropout=0.0, attention_type="prob",
        sampling_factor=2, distil=False,
    )  # fmt: skip
    return InformerForPrediction(cfg)


def _cohere() -> nn.Module:
    from transformers import CohereConfig, CohereForCausalLM

    _hf_quiet()
    # Cohere (Command-R): attention and SwiGLU MLP side by side on the output of one shared
    # bias-free LayerNorm (parallel block, no norm of its own in front of the MLP), LayerNorms
    # on every head's queries and keys, rotary positions interleaved, grouped-query attention,
    # tied embeddings and the logits scaled by a constant.
    cfg = CohereConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ,
        use_qk_norm=True, tie_word_embeddings=True, logit_scale=0.5, pad_token_id=0,
        bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return CohereForCausalLM(cfg)


def _roformer() -> nn.Module:
    from transformers import RoFormerConfig, RoFormerForMaskedLM

    _hf_quiet()
    # RoFormer: BERT's post-norm encoder with no position embeddings added to the tokens:
    # rotary positions turn every layer's queries and keys (sinusoids shared by the layers).
    cfg = RoFormerConfig(
        vocab_size=VOCAB, embedding_size=64, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, max_position_embeddings=SEQ,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, rotary_value=False,
    )  # fmt: skip
    return RoFormerForMaskedLM(cfg)


def _convnext_v2() -> nn.Module:
    from transformers import ConvNextV2Config, ConvNextV2ForImageClassification

    _hf_quiet()
    # ConvNeXt V2: ConvNeXt's depthwise 7x7 convolutions and channel LayerNorms, its layer
    # scale replaced by Global Response Normalization in the pointwise MLP (each channel's
    # spatial L2 norm divided by the mean over channels, a learned gain and bias).
    cfg = ConvNextV2Config(
        num_channels=3, patch_size=2, num_stages=2, hidden_sizes=[16, 32], depths=[2, 2],
        image_size=IMAGE, num_labels=CLASSES, drop_path_rate=0.0,
    )  # fmt: skip
    return ConvNextV2ForImageClassification(cfg)


class _ResNetD(nn.Module):
    """RT-DETR's ResNet-D backbone with a classifier: a deep stem of three 3x3 convolutions
    (BatchNorm, ReLU) and a max-pool, basic blocks, and where the shape changes a shortcut
    that average-pools before its 1x1 convolution (BatchNorm) instead of striding it; global
    average pooling and a Linear on the last stage's map."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import RTDetrResNetBackbone, RTDetrResNetConfig

        _hf_quiet()
        cfg = RTDetrResNetConfig(
            num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[2, 2],
            layer_type="basic", downsample_in_first_stage=False, out_features=["stage2"],
        )  # fmt: skip
        self.backbone = RTDetrResNetBackbone(cfg)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).feature_maps[-1].mean((2, 3)))


def _deepseek_v3() -> nn.Module:
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    _hf_quiet()
    # DeepSeek-V3: multi-head latent attention (the queries through a low-rank latent with its
    # own RMSNorm, q_a_proj then q_b_proj; keys and values rebuilt from one shared 32-wide
    # latent, kv_a_proj_with_mqa then kv_b_proj, beside a decoupled rotary key shared by the
    # heads), a dense SwiGLU first layer, then a MoE layer: a shared expert plus four routed
    # ones picked top-2 by sigmoid scores (with their score-correction bias), weights fused.
    cfg = DeepseekV3Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1,
        n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1,
        first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8,
        qk_nope_head_dim=16, v_head_dim=16, max_position_embeddings=SEQ,
        routed_scaling_factor=1.0, pad_token_id=0, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return DeepseekV3ForCausalLM(cfg)


def _minimax() -> nn.Module:
    from transformers import MiniMaxConfig, MiniMaxForCausalLM

    _hf_quiet()
    # MiniMax-01: layer 0 is lightning attention, linear attention with a per-head exponential
    # decay computed in blocks of 16 positions (exact within a block, a running key-value state
    # between blocks), its fused qkv projection SiLU'd, its output RMS-normed and gated by a
    # sigmoid of the input; layer 1 is softmax attention. Both feed a Mixtral-style top-2 MoE
    # (four experts, weights fused), each residual branch weighted by alpha and beta factors.
    cfg = MiniMaxConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        num_local_experts=4, num_experts_per_tok=2,
        layer_types=["linear_attention", "full_attention"], block_size=16, pad_token_id=0,
        bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return MiniMaxForCausalLM(cfg)


def _xlstm() -> nn.Module:
    from transformers import xLSTMConfig, xLSTMForCausalLM

    _hf_quiet()
    # xLSTM 7B's block (no attention): an mLSTM layer, a matrix-memory LSTM per head (query,
    # key and value projections, exponential input gate and sigmoid forget gate soft-capped,
    # a stabilized recurrence computed chunkwise in parallel, 16 steps a chunk, in torch's own
    # ops), a per-head LayerNorm and an output gate; then a gated (SiLU) feed-forward; RMSNorm
    # in front of both. The kernels run in float32 (their default autocasts to bfloat16).
    cfg = xLSTMConfig(
        vocab_size=VOCAB, hidden_size=64, embedding_dim=64, num_hidden_layers=2, num_blocks=2,
        num_heads=4, mode="train", chunk_size=16, autocast_kernel_dtype="float32",
        inference_state_dtype="float32", ffn_round_up_to_multiple_of=16, use_cache=False,
        pad_token_id=0, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return xLSTMForCausalLM(cfg)


class _RepVGG(nn.Module):
    """EfficientLoFTR's RepVGG backbone with a classifier: VGG-style plain stages whose every
    block sums three branches at training time, a 3x3 convolution with BatchNorm, a 1x1
    convolution with BatchNorm and (where the shape allows) a BatchNorm of its input, then a
    ReLU (the branches fold into one 3x3 convolution for inference, not done here). Its first
    stage, one block, is the stem; it reads three channels here (EfficientLoFTR reads
    grayscale), at stride 1 (EfficientLoFTR's is 2): torch 2.13's oneDNN backward of a 1x1
    stride-2 convolution reading a 3-channel channels-last map, on one thread, corrupts the
    heap (glibc aborts "double free or corruption"), which the channels-last healthy rerun
    hit. Global average pooling and a Linear on the last stage's map."""

    def __init__(self) -> None:
        super().__init__()
        from transformers.models.efficientloftr.configuration_efficientloftr import (
            EfficientLoFTRConfig,
        )
        from transformers.models.efficientloftr.modeling_efficientloftr import (
            EfficientLoFTRepVGG,
        )

        _hf_quiet()
        cfg = EfficientLoFTRConfig(
            stage_num_blocks=[1, 2, 2], stage_stride=[1, 1, 2], out_features=[16, 16, 32],
            hidden_size=32, num_attention_heads=4,
        )  # fmt: skip
        cfg.stage_block_in_channels[0][0] = 3
        # Built outside EfficientLoFTR's PreTrainedModel: torch's own initialization (BatchNorm
        # scales of 1), not the matcher's N(0, 0.02) BatchNorm scales.
        self.backbone = EfficientLoFTRepVGG(cfg)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images)[-1].mean((2, 3)))


def _wavlm() -> nn.Module:
    from transformers import WavLMConfig, WavLMForSequenceClassification

    _hf_quiet()
    # WavLM: Wav2Vec2's conv feature encoder and post-norm transformer, its attention biased
    # by bucketed relative positions (layer 0's bucket embedding, shared by the layers) and
    # that bias gated per head by a GRU-like gate computed from each query (gru_rel_pos_linear).
    # SpecAugment and LayerDrop off: both draw randoms.
    cfg = WavLMConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), feat_extract_norm="group",
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, classifier_proj_size=32,
        num_buckets=32, max_bucket_distance=64, num_labels=CLASSES, hidden_dropout=0.0,
        activation_dropout=0.0, attention_dropout=0.0, feat_proj_dropout=0.0, final_dropout=0.0,
        layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return WavLMForSequenceClassification(cfg)


def _zamba2() -> nn.Module:
    from transformers import Zamba2Config, Zamba2ForCausalLM

    _hf_quiet()
    # Zamba2: Mamba2 layers (state-space duality: a scalar decay per head, the scan computed
    # chunkwise, 16 steps a chunk, in torch's own ops; one fused in_proj makes the gate, x, B,
    # C and the step; a gated RMSNorm in front of out_proj) and, in its hybrid layers, one
    # shared attention-and-MLP block (weights shared by every hybrid layer) that reads the
    # hidden state concatenated with the original embeddings, with a LoRA adapter per layer on
    # its q, k, v and fused gate-up projections, whose output a Linear adds before the layer's
    # own Mamba2. Layer 0 is Mamba2 only, layer 1 hybrid.
    cfg = Zamba2Config(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
        layers_block_type=["mamba", "hybrid"], mamba_d_state=16, mamba_expand=2,
        n_mamba_heads=4, use_mamba_kernels=False, chunk_size=16, num_attention_heads=4,
        num_key_value_heads=4, intermediate_size=128, num_mem_blocks=1,
        use_shared_attention_adapter=True, adapter_rank=8, use_mem_rope=True,
        max_position_embeddings=SEQ, use_cache=False, pad_token_id=0, bos_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return Zamba2ForCausalLM(cfg)


class _T5Gemma(nn.Module):
    """T5Gemma: an encoder-decoder built of Gemma 2 layers (grouped-query attention with rotary
    positions, a sliding window of 8 on layer 0 and global attention on layer 1, attention
    logits soft-capped at 50 and the final logits at 30, pre- and post-norms around both the
    attention and the gated GELU MLP, RMSNorms scaling by 1 + weight); the decoder's layers
    cross-attend to the encoder's output. T5Gemma masks the positions whose token is the pad
    token: called with all-ones masks, every token of the chains (0 included) is read."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import (
            T5GemmaConfig,
            T5GemmaForConditionalGeneration,
            T5GemmaModuleConfig,
        )

        _hf_quiet()
        stack = dict(
            vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            max_position_embeddings=SEQ, sliding_window=8,
            layer_types=["sliding_attention", "full_attention"], attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0, query_pre_attn_scalar=16, dropout_rate=0.0,
            attention_dropout=0.0,
        )  # fmt: skip
        cfg = T5GemmaConfig(
            encoder=T5GemmaModuleConfig(**stack), decoder=T5GemmaModuleConfig(**stack),
            vocab_size=VOCAB, dropout_rate=0.0, attention_dropout=0.0, pad_token_id=0,
            bos_token_id=0, eos_token_id=1, decoder_start_token_id=0,
        )  # fmt: skip
        self.model = T5GemmaForConditionalGeneration(cfg)

    def forward(self, input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> object:
        return self.model(
            input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
            decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=torch.ones_like(decoder_input_ids),
        )  # fmt: skip


def _mobilevit_v2() -> nn.Module:
    from transformers import MobileViTV2Config, MobileViTV2ForImageClassification

    _hf_quiet()
    # MobileViTV2: MobileNetV2 inverted residuals (BatchNorm, SiLU), and in its later stages a
    # block that unfolds the map into 2x2 patches and runs a separable self-attention across
    # them (one 1x1 convolution makes a context score per patch, the keys and the values; the
    # scores, softmaxed over patches, pool the keys into one context vector that gates the
    # ReLU'd values: linear in the patches, no query-key matrix), GroupNorms of one group in
    # those blocks. Output stride 8: the last two stages dilate instead of striding (16x16
    # images leave 2x2 maps after three strides).
    cfg = MobileViTV2Config(
        image_size=IMAGE, num_channels=3, patch_size=2, width_multiplier=0.25, output_stride=8,
        attn_dropout=0.0, ffn_dropout=0.0, hidden_dropout_prob=0.0,
        classifier_dropout_prob=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return MobileViTV2ForImageClassification(cfg)


def _w2v_bert() -> nn.Module:
    from transformers import Wav2Vec2BertConfig, Wav2Vec2BertForSequenceClassification

    _hf_quiet()
    # Wav2Vec2-BERT (w2v-BERT 2.0, Seamless's speech encoder): log-mel frames, LayerNormed and
    # projected to tokens (no conv feature encoder), then Conformer layers: two half-step SiLU
    # feed-forwards (Macaron) around a self-attention with Shaw-style relative position
    # embeddings (clipped 16 to the left, 4 to the right, an Embedding of distances whose
    # query-distance products add to the logits) and a convolution module (pointwise GLU, a
    # causal depthwise 9-wide convolution, LayerNorm where a Conformer has BatchNorm, SiLU,
    # pointwise), LayerNorm in front of each and at the end; mean pooling, a projection and a
    # classifier. SpecAugment and LayerDrop off: both draw randoms.
    cfg = Wav2Vec2BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        feature_projection_input_dim=MELS, position_embeddings_type="relative_key",
        left_max_position_embeddings=16, right_max_position_embeddings=4,
        conv_depthwise_kernel_size=9, classifier_proj_size=32, num_labels=CLASSES,
        hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0, feat_proj_dropout=0.0,
        final_dropout=0.0, conformer_conv_dropout=0.0, layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return Wav2Vec2BertForSequenceClassification(cfg)


def _univnet() -> nn.Module:
    from transformers import UnivNetConfig, UnivNetModel

    _hf_quiet()
    # UnivNet's generator, a vocoder (no attention, no recurrence, no normalization layer): a
    # noise sequence, one vector per spectrogram frame, goes through a convolution, then per
    # stage a transposed convolution upsamples it 4x and residual layers each apply a
    # dilated convolution and a location-variable convolution, whose kernels and biases a
    # kernel predictor (its own residual convolution stack) computes from the spectrogram,
    # frame by frame, gated by a tanh-sigmoid; a last convolution and tanh give the waveform.
    cfg = UnivNetConfig(
        model_in_channels=16, model_hidden_channels=16, num_mel_bins=BINS,
        resblock_kernel_sizes=[3, 3], resblock_stride_sizes=[4, 4],
        resblock_dilation_sizes=[[1, 3], [1, 3]], kernel_predictor_num_blocks=1,
        kernel_predictor_hidden_channels=16, kernel_predictor_dropout=0.0,
    )  # fmt: skip
    return UnivNetModel(cfg)


def _longt5() -> nn.Module:
    from transformers import LongT5Config, LongT5ForConditionalGeneration

    _hf_quiet()
    # LongT5 with transient-global attention in its encoder: each token attends to the tokens
    # of its own block and the two neighbouring blocks (local radius 4: blocks of 5 tokens)
    # and to transient global tokens, the per-block sums of the layer's input (blocks of 4
    # tokens), normed and computed afresh in every layer, with their own relative position
    # buckets; the decoder is T5's (full causal self-attention, cross-attention). Gated-GELU
    # MLPs (wi_0 the GELU'd gate, wi_1 the linear branch), RMS norms, no biases, embeddings
    # tied.
    cfg = LongT5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
        vocab_size=VOCAB, dropout_rate=0.0, relative_attention_num_buckets=8,
        relative_attention_max_distance=SEQ // 2, local_radius=4, global_block_size=4,
        encoder_attention_type="transient-global", feed_forward_proj="gated-gelu",
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, use_cache=False,
    )  # fmt: skip
    return LongT5ForConditionalGeneration(cfg)


def _falcon_h1() -> nn.Module:
    from transformers import FalconH1Config, FalconH1ForCausalLM

    _hf_quiet()
    # Falcon-H1: every layer runs a grouped-query attention (rotary positions) and a Mamba2
    # mixer side by side on the same normed input (not interleaved, as Jamba and Zamba2 do) and
    # adds both outputs, each scaled by its own fixed multiplier, then a SwiGLU MLP; muP-style
    # multipliers (set away from 1 here) scale the embeddings, the keys, the attention's and the
    # SSM's input and output, the MLP's gate and down projections, the SSM's in_proj parts and
    # the logits. The Mamba2 scan runs chunkwise in torch's own ops (16 steps a chunk).
    cfg = FalconH1Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        mamba_d_ssm=64, mamba_n_heads=4, mamba_d_head=16, mamba_n_groups=1, mamba_d_state=16,
        mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=16, mamba_rms_norm=True,
        embedding_multiplier=2.0, lm_head_multiplier=0.5, key_multiplier=0.5,
        attention_in_multiplier=1.0, attention_out_multiplier=0.75, ssm_in_multiplier=1.25,
        ssm_out_multiplier=0.5, mlp_multipliers=[0.75, 0.5], tie_word_embeddings=False,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return FalconH1ForCausalLM(cfg)


class _PPLCNetV3(nn.Module):
    """PP-LCNetV3's backbone with a classifier: depthwise-separable blocks whose depthwise and
    pointwise convolutions are each a learnable reparameterization layer (MobileOne-style: at
    training time the sum of four parallel kxk convolution-BatchNorm branches, a 1x1
    convolution-BatchNorm branch and, where the shape allows, a BatchNorm of the input, then
    a learnable scalar affine; hardswish, itself followed by a learnable scalar affine),
    squeeze-and-excitation in the last stage. Global average pooling and a Linear on the
    last stage's map. BatchNorm throughout."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import PPLCNetV3Backbone, PPLCNetV3Config

        _hf_quiet()
        cfg = PPLCNetV3Config(
            block_configs=[[[3, 8, 16, 1, False]], [[3, 16, 32, 2, False], [3, 32, 32, 1, False]],
                           [[3, 32, 32, 1, False]], [[3, 32, 64, 2, False]],
                           [[3, 64, 64, 1, True]]],
            stem_channels=8, stem_stride=2, out_features=["stage5"],
        )  # fmt: skip
        self.backbone = PPLCNetV3Backbone(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).feature_maps[-1].mean((2, 3)))


class _Parakeet(nn.Module):
    """Parakeet's FastConformer encoder with a classifier: log-mel frames through a
    convolutional subsampling (a stride-2 3x3 convolution, ReLU, a stride-2 depthwise 3x3 and
    a pointwise convolution, ReLU, then a Linear that makes each 4-frame step a token), then
    Conformer layers: two half-step SiLU feed-forwards (Macaron) around a self-attention with
    Transformer-XL relative positions (sinusoidal distances projected by relative_k_proj,
    content and position biases per head) and a convolution module (pointwise GLU, depthwise
    9-wide convolution, BatchNorm, SiLU, pointwise), LayerNorms in front of each and at the
    end; mean pooling and a Linear. BatchNorm in the convolution modules."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import ParakeetEncoder, ParakeetEncoderConfig

        _hf_quiet()
        cfg = ParakeetEncoderConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            conv_kernel_size=9, subsampling_factor=4, subsampling_conv_channels=16,
            num_mel_bins=MELS, dropout=0.0, dropout_positions=0.0, layerdrop=0.0,
            activation_dropout=0.0, attention_dropout=0.0, max_position_embeddings=SEQ,
        )  # fmt: skip
        self.encoder = ParakeetEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        # (batch, 1, frames, bins): the one-channel map its subsampling convolutions read.
        return self.head(self.encoder(input_features=maps[:, 0]).last_hidden_state.mean(1))


def _decision_transformer() -> nn.Module:
    from transformers import DecisionTransformerConfig, DecisionTransformerModel

    _hf_quiet()
    # Decision Transformer (offline reinforcement learning as sequence modelling): every time
    # step's return-to-go, state and action, each embedded by its own Linear plus a learned
    # embedding of the time step, become three tokens (return, state, action) of a GPT-2
    # without position embeddings (LayerNorm over the interleaved tokens first); the action is
    # read off each state's token, through a Linear and tanh.
    cfg = DecisionTransformerConfig(
        state_dim=STATE, act_dim=ACT, hidden_size=64, max_ep_len=EPISODE, n_positions=3 * EPISODE,
        n_layer=2, n_head=4, n_inner=128, activation_function="gelu_new", resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False, action_tanh=True,
    )  # fmt: skip
    return DecisionTransformerModel(cfg)


def _gemma3n() -> nn.Module:
    from transformers import Gemma3nForCausalLM, Gemma3nTextConfig

    _hf_quiet()
    # Gemma 3n's text decoder: AltUp keeps two copies of the hidden state (one active, one
    # predicted from it by learned coefficients that a router picks per token, then corrected
    # after the layer), a LAuReL low-rank residual branch (linear_left, linear_right) beside
    # the attention, per-layer embeddings (a second token embedding, 16 wide per layer, mixed
    # with a projection of the hidden state and gated into every layer's output), q, k and v
    # RMS norms, sliding-window (8) and full attention alternating, a GELU-tanh MLP whose
    # layer-0 gate keeps only activations above a Gaussian top-5% cut (activation sparsity).
    cfg = Gemma3nTextConfig(
        vocab_size=VOCAB, vocab_size_per_layer_input=VOCAB, hidden_size=64,
        hidden_size_per_layer_input=16, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        sliding_window=8, layer_types=["sliding_attention", "full_attention"],
        altup_num_inputs=2, altup_active_idx=0, laurel_rank=16, num_kv_shared_layers=0,
        activation_sparsity_pattern=[0.95, 0.0], use_cache=False, pad_token_id=0,
        bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return Gemma3nForCausalLM(cfg)


def _gpt_oss() -> nn.Module:
    from transformers import GptOssConfig, GptOssForCausalLM

    _hf_quiet()
    # GPT-OSS: attention with learned per-head sinks (an extra logit each head's softmax
    # spreads over, which no value receives), biases on q, k, v and o, grouped-query heads,
    # sliding-window (8) and full attention alternating; a sparse MoE of four experts (top-2,
    # the router's softmax taken over the chosen two only) whose fused gate_up projection has
    # biases and whose SwiGLU is clamped (gate at 7, linear branch to [-7, 7], sigmoid scaled
    # by 1.702, the linear branch plus 1). Rotary positions without YaRN here.
    cfg = GptOssConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=4,
        num_experts_per_tok=2, sliding_window=8, max_position_embeddings=SEQ,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=False, use_cache=False, pad_token_id=0, bos_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return GptOssForCausalLM(cfg)


def _swinv2() -> nn.Module:
    from transformers import Swinv2Config, Swinv2ForImageClassification

    _hf_quiet()
    # Swin V2: Swin's shifted 4x4 windows, but cosine attention (the q and k directions'
    # cosine times a learned per-head logit scale, clamped at log 100) and a continuous
    # relative position bias (log-spaced coordinates through a two-layer MLP, 16 times a
    # sigmoid), res-post-norm (each branch's LayerNorm after it, before the residual add),
    # no key bias.
    cfg = Swinv2Config(
        image_size=IMAGE, patch_size=2, num_channels=3, embed_dim=32, depths=[2, 2],
        num_heads=[2, 4], window_size=4, mlp_ratio=2.0, drop_path_rate=0.0,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return Swinv2ForImageClassification(cfg)


def _sew_d() -> nn.Module:
    from transformers import SEWDConfig, SEWDForSequenceClassification

    _hf_quiet()
    # SEW-D: Wav2Vec2's conv feature encoder (GroupNorm on its first layer), a weight-normed
    # convolutional position embedding whose frames are then squeezed 2x (average pooling),
    # DeBERTa-v2's post-norm layers with disentangled attention (content-to-position and
    # position-to-content terms over log-bucketed relative positions, shared position
    # embeddings), then upsampled back to the frame rate; mean pooling. SpecAugment and
    # LayerDrop off: both draw randoms.
    cfg = SEWDConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        squeeze_factor=2, conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
        feat_extract_norm="group", num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        position_buckets=16, max_position_embeddings=64, classifier_proj_size=32,
        num_labels=CLASSES, hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
        feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return SEWDForSequenceClassification(cfg)


class _Encodec(nn.Module):
    """EnCodec's SEANet encoder with a classifier (not a transformer): a 7-wide convolution,
    then per stage a residual block (ELU, a dilated 3-wide and a 1-wide convolution, a 1-wide
    convolution as the shortcut), ELU and a strided convolution (2x, then 4x), a two-layer
    LSTM added to its input, ELU and a last 7-wide convolution; every convolution followed by
    a one-group GroupNorm over channels and time (the 48 kHz model's non-causal
    time_group_norm), reflect padding. Mean pooling over time and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import EncodecConfig, EncodecModel

        _hf_quiet()
        cfg = EncodecConfig(
            audio_channels=1, num_filters=8, num_residual_layers=1, upsampling_ratios=[4, 2],
            norm_type="time_group_norm", use_causal_conv=False, kernel_size=7,
            last_kernel_size=7, residual_kernel_size=3, dilation_growth_rate=2, hidden_size=32,
            num_lstm_layers=2, compress=2, pad_mode="reflect", codebook_size=16,
        )  # fmt: skip
        self.encoder = EncodecModel(cfg).encoder
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves[:, None]).mean(-1))


def _jetmoe() -> nn.Module:
    from transformers import JetMoeConfig, JetMoeForCausalLM

    _hf_quiet()
    # JetMoE: a mixture of attention heads (MoA: a router picks two of four query experts per
    # token, each expert's input_linear making its own heads' queries and its output_linear
    # mapping them back, while one shared kv_proj makes the keys and values for all of them)
    # and a sparse MoE MLP of four SwiGLU experts (top-2), both with their experts' weights
    # fused into one (experts, out, in) tensor per projection, RMS norms, rotary positions.
    cfg = JetMoeConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_key_value_heads=2,
        kv_channels=16, intermediate_size=64, max_position_embeddings=SEQ,
        num_local_experts=4, num_experts_per_tok=2, aux_loss_coef=0.0, use_cache=False,
        tie_word_embeddings=False, pad_token_id=0, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return JetMoeForCausalLM(cfg)


def _pegasus_x() -> nn.Module:
    from transformers import PegasusXConfig, PegasusXForConditionalGeneration

    _hf_quiet()
    # PEGASUS-X, encoder-decoder: the encoder's attention is block-local (blocks of 4 tokens,
    # staggered by half a block every other layer) plus four learned global tokens that every
    # token attends to and that attend to every token, with their own LayerNorm; sinusoidal
    # positions, pre-norm, a scaled word embedding shared by encoder, decoder and head.
    cfg = PegasusXConfig(
        vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
        decoder_ffn_dim=128, max_position_embeddings=SEQ, num_global_tokens=4, block_size=4,
        stagger_local_blocks=True, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        use_cache=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
    )  # fmt: skip
    return PegasusXForConditionalGeneration(cfg)


def _pvt() -> nn.Module:
    from transformers import PvtConfig, PvtForImageClassification

    _hf_quiet()
    # PVT (Pyramid Vision Transformer, v1): non-overlapping patch embeddings with learned
    # absolute positions per stage, spatial-reduction attention (the keys and values read a
    # map shrunk 2x by a strided convolution and a LayerNorm, the queries the full map),
    # pre-norm LayerNorm blocks, a class token added in the last stage only.
    cfg = PvtConfig(
        image_size=IMAGE, num_channels=3, num_encoder_blocks=2, depths=[2, 2],
        sequence_reduction_ratios=[2, 1], hidden_sizes=[32, 64], patch_sizes=[4, 2],
        strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2], hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return PvtForImageClassification(cfg)


def _data2vec_audio() -> nn.Module:
    from transformers import Data2VecAudioConfig, Data2VecAudioForSequenceClassification

    _hf_quiet()
    # Data2Vec-Audio: a conv feature encoder with a LayerNorm after every convolution (not
    # Wav2Vec2's GroupNorm on the first only), a positional embedding of five stacked grouped
    # convolutions each with a parameter-free LayerNorm (no weight norm), post-norm layers,
    # mean pooling. SpecAugment and LayerDrop off: both draw randoms.
    cfg = Data2VecAudioConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), conv_pos_kernel_size=5,
        num_conv_pos_embedding_groups=4, classifier_proj_size=32, num_labels=CLASSES,
        hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
        feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return Data2VecAudioForSequenceClassification(cfg)


class _Dac(nn.Module):
    """The Descript audio codec's encoder with a classifier (not a transformer, no norm
    anywhere): a 7-wide convolution, then per stage three residual units (Snake, a dilated
    7-wide convolution at dilation 1, 3 and 9, Snake, a 1-wide convolution, added to the
    input), Snake and a strided convolution (2x, then 4x); Snake and a last 3-wide
    convolution. Snake is x + sin^2(alpha x) / alpha with a learned alpha per channel. Mean
    pooling over time and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import DacConfig, DacModel

        _hf_quiet()
        cfg = DacConfig(
            encoder_hidden_size=8, downsampling_ratios=[2, 4], decoder_hidden_size=16,
            n_codebooks=2, codebook_size=16, codebook_dim=4, hidden_size=32,
        )  # fmt: skip
        self.encoder = DacModel(cfg).encoder
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves[:, None]).mean(-1))


def _mamba2() -> nn.Module:
    from transformers import Mamba2Config, Mamba2ForCausalLM

    _hf_quiet()
    # Mamba-2, a pure state-space LM (no attention, no MLP): each block's one in_proj makes
    # the gate z, the scan input x, the shared B and C and a step per head at once; a causal
    # depthwise conv1d, then the SSD scan (a scalar decay per head, computed chunk by chunk as
    # masked matmuls within chunks of 16 and a recurrence between them), a gated RMSNorm and
    # out_proj; the pure-torch path (no mamba_ssm kernels). Mamba 1's selective scan has a
    # separate x_proj and per-channel decays; Zamba2 and Falcon-H1 use Mamba-2 mixers only
    # inside hybrids with attention.
    cfg = Mamba2Config(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, state_size=16, expand=2,
        head_dim=16, num_heads=8, n_groups=1, chunk_size=16, conv_kernel=4,
        tie_word_embeddings=False, use_cache=False,
    )  # fmt: skip
    return Mamba2ForCausalLM(cfg)


def _nllb_moe() -> nn.Module:
    from transformers import NllbMoeConfig, NllbMoeForConditionalGeneration

    _hf_quiet()
    # NLLB-MoE, encoder-decoder: pre-norm layers, sinusoidal positions, a scaled shared word
    # embedding; every second layer's MLP is a mixture of four ReLU experts with top-2
    # routing (the second expert always taken, not sampled), separate unfused expert
    # modules. No expert token dropout (it draws randoms) and an expert capacity of the whole
    # batch, so no token is ever dropped.
    cfg = NllbMoeConfig(
        vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
        decoder_ffn_dim=128, num_experts=4, expert_capacity=BATCH * SEQ, encoder_sparse_step=2,
        decoder_sparse_step=2, second_expert_policy="all", moe_token_dropout=0.0,
        router_z_loss_coef=0.0, router_aux_loss_coef=0.0, max_position_embeddings=SEQ + 4,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        moe_eval_capacity_token_fraction=1.0, use_cache=False, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0,
    )  # fmt: skip
    return NllbMoeForConditionalGeneration(cfg)


class _VitDet(nn.Module):
    """ViTDet's plain ViT backbone with a classifier: a patch convolution plus learned
    absolute positions, pre-norm blocks whose fused qkv attention adds decomposed relative
    position terms (height and width tables), block 0 attending within 4x4 windows and
    block 1 globally; mean pooling over the map and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import VitDetConfig, VitDetModel

        _hf_quiet()
        cfg = VitDetConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2,
            image_size=IMAGE, pretrain_image_size=IMAGE, patch_size=2, window_size=4,
            window_block_indices=[0], use_relative_position_embeddings=True,
            drop_path_rate=0.0,
        )  # fmt: skip
        self.backbone = VitDetModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).last_hidden_state.mean((2, 3)))


def _ast() -> nn.Module:
    from transformers import ASTConfig, ASTForAudioClassification

    _hf_quiet()
    # Audio Spectrogram Transformer: a ViT over a log-mel spectrogram (frames, bins) cut
    # into overlapping-free 4x4 patches by a convolution, a class and a distillation token,
    # learned positions, pre-norm blocks, the two tokens' mean into a LayerNorm and a Linear.
    cfg = ASTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        patch_size=4, frequency_stride=4, time_stride=4, max_length=FRAMES, num_mel_bins=MELS,
        num_labels=CLASSES, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return ASTForAudioClassification(cfg)


def _time_series_transformer() -> nn.Module:
    from transformers import TimeSeriesTransformerConfig, TimeSeriesTransformerForPrediction

    _hf_quiet()
    # The vanilla Time Series Transformer: a probabilistic encoder-decoder forecaster (a
    # Student-t head, trained by its likelihood) with full softmax attention, post-norm
    # layers, sinusoidal positions; the encoder reads lags 1-3 of the mean-scaled series plus
    # a time feature, the decoder the future steps teacher-forced.
    cfg = TimeSeriesTransformerConfig(
        prediction_length=HORIZON, context_length=CONTEXT - 3, input_size=SERIES,
        lags_sequence=[1, 2, 3], num_time_features=1, d_model=32, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_layers=2, decoder_layers=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
        attention_dropout=0.0, activation_dropout=0.0,
    )  # fmt: skip
    return TimeSeriesTransformerForPrediction(cfg)


def _doge() -> nn.Module:
    from transformers import DogeConfig, DogeForCausalLM

    _hf_quiet()
    # Doge, a decoder LM with dynamic mask attention: a dt_proj of the values gives each key
    # position a learned, input-dependent bias per head (an exponentiated, gated step, as in a
    # state-space model), added to the causal scores, and only the keep_window_size (16 of 32)
    # best-biased keys per head stay unmasked; QK RMSNorm, RoPE, grouped queries; a SwiGLU MLP.
    # Not its cross-domain MoE (is_moe): its router views the logits of all the batch's tokens
    # as one (2, tokens, keys) block, so each token's experts depend on the other sequences of
    # its micro-batch, and the accumulation split would change the maths.
    cfg = DogeConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, keep_window_size=16, is_moe=False,
        max_position_embeddings=SEQ, tie_word_embeddings=False, use_cache=False,
    )  # fmt: skip
    return DogeForCausalLM(cfg)


def _nemotron_h() -> nn.Module:
    from transformers import NemotronHConfig, NemotronHForCausalLM

    _hf_quiet()
    # Nemotron-H, a hybrid LM whose blocks each hold one mixer behind one RMSNorm: twice a
    # Mamba-2 block (the pure-torch SSD scan, as Mamba-2's), a grouped-query attention block
    # (no positional encoding at all: the Mamba-2 blocks ahead of it carry the order) and an
    # MLP block (up_proj, squared ReLU, down_proj; no gate). Zamba2 shares one attention
    # block, Falcon-H1 runs attention and Mamba-2 side by side in every layer, Jamba uses
    # Mamba 1 and MoE.
    cfg = NemotronHConfig(
        vocab_size=VOCAB, hidden_size=64,
        layer_types=["linear_attention", "full_attention", "mlp"] * 2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ, intermediate_size=128,
        ssm_state_size=16, mamba_num_heads=8, mamba_head_dim=16, n_groups=1, chunk_size=16,
        use_cache=False, tie_word_embeddings=False,
    )  # fmt: skip
    return NemotronHForCausalLM(cfg)


class _Aimv2(nn.Module):
    """AIMv2's vision encoder with a classifier: a patch convolution followed by an RMSNorm,
    learned absolute positions, pre-norm blocks with RMSNorm and a SwiGLU MLP, no bias in
    any projection, a final RMSNorm and AIMv2's attention-pooling head (a learned class query
    attending over the patches); a Linear on the pooled vector."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Aimv2VisionConfig, Aimv2VisionModel

        _hf_quiet()
        cfg = Aimv2VisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=2, use_head=True, is_native=False,
        )  # fmt: skip
        self.backbone = Aimv2VisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).pooler_output)


class _Mimi(nn.Module):
    """The Mimi audio codec's encoder with a classifier: a SEANet convnet with causal
    convolutions, ELU and no norm (a stem, then per stage a residual block and a strided
    convolution, 4x then 2x), a last convolution making each step a token; a causal
    transformer over them (pre-norm LayerNorm, RoPE, a sliding window of 16, LayerScale at
    0.01 on both branches, a GELU MLP), and a strided convolution down to the latent frame
    rate (2x). Mean pooling over the latents and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import MimiEncoderConfig, MimiEncoderModel

        _hf_quiet()
        cfg = MimiEncoderConfig(
            hidden_size=32, num_filters=8, upsampling_ratios=[4, 2], num_hidden_layers=2,
            intermediate_size=64, num_attention_heads=4, num_key_value_heads=4,
            codebook_dim=16, sliding_window=16, sampling_rate=800, frame_rate=50,
        )  # fmt: skip
        self.encoder = MimiEncoderModel(cfg)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves[:, None]).latents.mean(-1))


@dataclass
class VocoderWaves:
    waveforms: torch.Tensor


class _HifiGan(nn.Module):
    """SpeechT5's HiFi-GAN generator, a vocoder (no attention, no recurrence, no norm): a
    7-wide convolution over the spectrogram frames, then per stage leaky ReLU, a transposed
    convolution upsampling 4x and a multi-receptive-field fusion (the mean of two residual
    blocks, 3- and 5-wide, each two pairs of a dilated and an undilated convolution with
    leaky ReLUs); leaky ReLU, a last 7-wide convolution and tanh. It reads the spectrogram
    only (the noise sequence _spectra packs beside it goes unused)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import SpeechT5HifiGan, SpeechT5HifiGanConfig

        _hf_quiet()
        cfg = SpeechT5HifiGanConfig(
            model_in_dim=BINS, upsample_initial_channel=32, upsample_rates=[4, 4],
            upsample_kernel_sizes=[8, 8], resblock_kernel_sizes=[3, 5],
            resblock_dilation_sizes=[[1, 3], [1, 3]], normalize_before=False,
        )  # fmt: skip
        self.vocoder = SpeechT5HifiGan(cfg)

    def forward(self, input_features: torch.Tensor, noise_sequence: torch.Tensor) -> VocoderWaves:
        del noise_sequence
        return VocoderWaves(self.vocoder(input_features))


def _hrm_text() -> nn.Module:
    from transformers import HrmTextConfig, HrmTextForCausalLM

    _hf_quiet()
    # HRM-Text, a hierarchical recurrent-depth LM: two weight-tied stacks (a fast low-level one
    # and a slow high-level one, one causal block each: GQA with RoPE and a sigmoid output
    # gate, a SwiGLU MLP, RMS norms) run in nested cycles on the same token states, the
    # low-level stack twice per high-level step, twice; only the last cycles carry gradients
    # (its training-time gradient routing). Causal throughout (no prefix-LM overlay).
    cfg = HrmTextConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, H_cycles=2, L_cycles=2,
        prefix_lm=False,
        max_position_embeddings=SEQ, use_cache=False, tie_word_embeddings=False,
    )  # fmt: skip
    return HrmTextForCausalLM(cfg)


def _big_bird() -> nn.Module:
    from transformers import BigBirdConfig, BigBirdForMaskedLM

    _hf_quiet()
    # BigBird, an encoder with block-sparse attention: blocks of 4 tokens, each attending to
    # its sliding window of three blocks, to the first and last (global) blocks and to one
    # random block drawn per layer from a seeded numpy generator (the same blocks at every
    # call); the global blocks attend to everything. BERT's post-norm layers otherwise.
    cfg = BigBirdConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=SEQ, attention_type="block_sparse",
        block_size=4, num_random_blocks=1, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pad_token_id=0,
    )  # fmt: skip
    return BigBirdForMaskedLM(cfg)


class _Dinov3Vit(nn.Module):
    """DINOv3's ViT with a classifier: a patch convolution, a class token and two register
    tokens, no position embedding (2-D rotary positions on the patch tokens' queries and keys,
    without the training-time jitter of their coordinates), pre-norm LayerNorm blocks with
    LayerScale on both branches and a GELU MLP; a Linear on the final-norm class token."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import DINOv3ViTConfig, DINOv3ViTModel

        _hf_quiet()
        cfg = DINOv3ViTConfig(
            patch_size=2, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, image_size=IMAGE, num_register_tokens=2,
            pos_embed_shift=None, pos_embed_jitter=None, pos_embed_rescale=None,
            layerscale_value=0.1,
        )  # fmt: skip
        self.backbone = DINOv3ViTModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).pooler_output)


class _Speech2Text(nn.Module):
    """Speech2Text's encoder with a classifier: log-mel frames through a subsampler of two
    strided conv1d (stride 2 each, each doubling its channels for a GLU), embeddings scaled
    by sqrt(d_model) plus fixed sinusoidal positions, pre-norm transformer layers (ReLU MLP)
    and a final LayerNorm; mean pooling over the frames and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Speech2TextConfig, Speech2TextModel

        _hf_quiet()
        cfg = Speech2TextConfig(
            vocab_size=16, d_model=32, encoder_layers=2, decoder_layers=1, encoder_ffn_dim=64,
            decoder_ffn_dim=64, encoder_attention_heads=4, decoder_attention_heads=4,
            conv_channels=32, input_feat_per_channel=MELS, conv_kernel_sizes=[5, 5],
            dropout=0.0, max_source_positions=FRAMES, max_target_positions=8,
        )  # fmt: skip
        self.encoder = Speech2TextModel(cfg).get_encoder()
        self.head = nn.Linear(32, CLASSES)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(frames).last_hidden_state.mean(1))


class _SuperPoint(nn.Module):
    """SuperPoint, a keypoint detector and descriptor (a convnet, no norm, no attention),
    with a classifier: a VGG-style encoder over the grayscale image (the mean of its three
    channels; per stage two 3x3 convolutions with ReLU, max pooling after the first three),
    then its two heads on the 1/8 grid: the interest-point head (a 3x3 and a 1x1 convolution
    scoring 64 pixel positions and a no-keypoint bin, softmaxed) and the descriptor head (a
    3x3 and a 1x1 convolution, L2-normalized per cell). Its keypoint extraction (threshold,
    NMS, top-k) is not differentiable and goes unused: a Linear reads the mean keypoint
    distribution and the mean descriptor."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import SuperPointConfig, SuperPointForKeypointDetection

        _hf_quiet()
        cfg = SuperPointConfig(
            encoder_hidden_sizes=[16, 16, 32, 32], decoder_hidden_size=64,
            descriptor_decoder_dim=32,
        )  # fmt: skip
        self.net = SuperPointForKeypointDetection(cfg)
        # torch's default initialization for its convolutions: with transformers' (normal, std
        # 0.02) the signal fades through its eight unnormalized convolutions and it learns
        # nothing in 120 steps.
        for module in self.net.modules():
            if isinstance(module, nn.Conv2d):
                module.reset_parameters()
        self.head = nn.Linear(65 + 32, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        net, relu = self.net, nn.functional.relu
        hidden = net.encoder(images.mean(1, keepdim=True)).last_hidden_state
        points = net.keypoint_decoder
        scores = points.conv_score_b(relu(points.conv_score_a(hidden))).softmax(1)
        desc = net.descriptor_decoder
        described = desc.conv_descriptor_b(relu(desc.conv_descriptor_a(hidden)))
        described = nn.functional.normalize(described, dim=1)
        return self.head(torch.cat([scores.mean((2, 3)), described.mean((2, 3))], 1))


def _ctrl() -> nn.Module:
    from transformers import CTRLConfig, CTRLLMHeadModel

    _hf_quiet()
    # CTRL, a causal LM with fixed sinusoidal positions added to the sqrt(d)-scaled token
    # embeddings, pre-norm layers with separate query, key and value projections (Wq, Wk,
    # Wv) and a ReLU MLP (ffn.0 and ffn.2); its control codes are ordinary tokens.
    cfg = CTRLConfig(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=64, dff=128, n_layer=2, n_head=4,
        resid_pdrop=0.0, embd_pdrop=0.0, use_cache=False,
    )  # fmt: skip
    return CTRLLMHeadModel(cfg)


def _granite_hybrid() -> nn.Module:
    from transformers import GraniteMoeHybridConfig, GraniteMoeHybridForCausalLM

    _hf_quiet()
    # Granite 4's hybrid LM: a Mamba-2 layer (its state-space mixer in place of attention),
    # then a GQA attention layer without positions (no RoPE); every layer's MLP is a
    # top-2-of-4 sparse mixture of experts beside a shared SwiGLU MLP, with RMS norms and
    # Granite's residual, embedding and logit multipliers left at 1.
    cfg = GraniteMoeHybridConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, shared_intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
        num_experts_per_tok=2, layer_types=["mamba", "attention"], mamba_n_heads=4,
        mamba_d_head=32, mamba_d_state=16, mamba_n_groups=1, mamba_chunk_size=SEQ,
        max_position_embeddings=SEQ, use_cache=False, tie_word_embeddings=False,
    )  # fmt: skip
    return GraniteMoeHybridForCausalLM(cfg)


class _Siglip(nn.Module):
    """SigLIP's vision tower with a classifier: a patch convolution plus learned absolute
    positions, no class token, pre-norm LayerNorm blocks (tanh-GELU MLP), a final LayerNorm
    and its multihead attention pooling head (one learned probe attending to every patch
    token, then a LayerNorm'd MLP); a Linear on the pooled probe."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import SiglipVisionConfig, SiglipVisionModel

        _hf_quiet()
        cfg = SiglipVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=2,
        )  # fmt: skip
        self.backbone = SiglipVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).pooler_output)


class _Moonshine(nn.Module):
    """Moonshine's speech encoder with a classifier: the raw waveform through its stem of
    three convolutions (kernel 127 stride 64 without bias, then tanh and a one-group
    GroupNorm; kernel 7 stride 3, GELU; kernel 3 stride 2, GELU), then pre-norm transformer
    layers with partial rotary positions and a GELU MLP, and a final LayerNorm; mean pooling
    over the frames and a Linear. Its stem strides 384 samples a frame: the 320 samples of
    _waves are resampled (linearly) to ten times their rate, 3200 samples, 7 frames."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import MoonshineConfig, MoonshineModel

        _hf_quiet()
        cfg = MoonshineConfig(
            vocab_size=16, hidden_size=32, intermediate_size=64, encoder_num_hidden_layers=2,
            decoder_num_hidden_layers=1, encoder_num_attention_heads=4,
            decoder_num_attention_heads=4, max_position_embeddings=64,
        )  # fmt: skip
        self.encoder = MoonshineModel(cfg).get_encoder()
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        waves = nn.functional.interpolate(waves[:, None], scale_factor=10, mode="linear")[:, 0]
        return self.head(self.encoder(waves).last_hidden_state.mean(1))


class _VitPose(nn.Module):
    """ViTPose, a keypoint (pose) estimator, with a classifier: its plain ViT backbone (a
    patch convolution with padding 2, learned positions, post-attention LayerNorm blocks)
    and its simple heatmap decoder (ReLU, bilinear upsampling by 4, a 3x3 convolution to 17
    keypoint heatmaps); a Linear on the mean of each heatmap. Its patch convolution pads by
    2 pixels, which keeps the patch grid only for patches wider than 4: the images are
    upsampled (nearest) to 32x32 and cut into 8x8 patches, 16 of them."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import VitPoseBackboneConfig, VitPoseConfig, VitPoseForPoseEstimation

        _hf_quiet()
        backbone = VitPoseBackboneConfig(
            image_size=[2 * IMAGE, 2 * IMAGE], patch_size=[8, 8], hidden_size=64,
            num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, out_indices=[2],
        )  # fmt: skip
        cfg = VitPoseConfig(backbone_config=backbone, use_simple_decoder=True, num_labels=17)
        self.pose = VitPoseForPoseEstimation(cfg)
        self.head = nn.Linear(17, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        images = nn.functional.interpolate(images, scale_factor=2, mode="nearest")
        return self.head(self.pose(images).heatmaps.mean((2, 3)))


def _fsmt() -> nn.Module:
    from transformers import FSMTConfig, FSMTForConditionalGeneration

    _hf_quiet()
    # FSMT (fairseq's WMT19 translation transformer): an encoder-decoder with separate source
    # and target vocabularies and embeddings (none shared, no tied head), fixed sinusoidal
    # positions added to sqrt(d)-scaled embeddings with no embedding LayerNorm, post-norm
    # layers and ReLU MLPs.
    cfg = FSMTConfig(
        langs=["en", "de"], src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=64,
        encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=SEQ + 4, dropout=0.0,
        decoder_start_token_id=0, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        forced_eos_token_id=None, use_cache=False,
    )  # fmt: skip
    return FSMTForConditionalGeneration(cfg)


def _bitnet() -> nn.Module:
    from transformers import BitNetConfig, BitNetForCausalLM

    _hf_quiet()
    # BitNet b1.58's architecture (its full-precision weights, not the ternary ones): a
    # Llama-like causal LM with GQA and rotary positions whose attention has an extra RMSNorm
    # (attn_sub_norm) before its output projection and whose gated MLP squares a ReLU
    # (ReLU^2) and normalises again (ffn_sub_norm) before its down projection.
    cfg = BitNetConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        use_cache=False, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return BitNetForCausalLM(cfg)


class _DaVit(nn.Module):
    """Florence-2's DaViT vision encoder with a classifier (dual attention, no BatchNorm):
    overlapping patch convolutions each with a LayerNorm (before the convolution from the
    second stage on), and in each stage blocks of two layers: a spatial layer (a depthwise
    convolution position encoding, then window attention over 4x4 windows and a GELU MLP,
    pre-norm) and a channel layer (the same, but its attention runs across channels, each
    channel group's tokens transposed into the sequence); mean pooling and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Florence2VisionBackbone, Florence2VisionConfig

        _hf_quiet()
        cfg = Florence2VisionConfig(
            depths=(1, 1), patch_size=(3, 3), patch_stride=(2, 2), patch_padding=(1, 1),
            patch_prenorm=(False, True), embed_dim=(32, 64), num_heads=(2, 4),
            num_groups=(2, 4), window_size=4, drop_path_rate=0.0, mlp_ratio=2.0,
            projection_dim=64,
        )  # fmt: skip
        self.backbone = Florence2VisionBackbone(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).last_hidden_state.mean((2, 3)))


def _sew() -> nn.Module:
    from transformers import SEWConfig, SEWForSequenceClassification

    _hf_quiet()
    # SEW (squeezed and efficient wav2vec): Wav2Vec2's conv feature encoder (GroupNorm on its
    # first layer) and a LayerNorm, a feature projection, a weight-normed convolutional
    # position embedding strided 2x while the frames are squeezed 2x (average pooling),
    # Wav2Vec2's post-norm layers, then a Linear upsampling back to the frame rate; mean
    # pooling. SpecAugment and LayerDrop off: both draw randoms.
    cfg = SEWConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        squeeze_factor=2, conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
        feat_extract_norm="group", num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        classifier_proj_size=32, num_labels=CLASSES, hidden_dropout=0.0,
        activation_dropout=0.0, attention_dropout=0.0, feat_proj_dropout=0.0,
        final_dropout=0.0, layerdrop=0.0, apply_spec_augment=False,
    )  # fmt: skip
    return SEWForSequenceClassification(cfg)


class _Yolos(nn.Module):
    """YOLOS, a detection transformer (a ViT that detects), with a classifier: a patch
    convolution, a class token and ten learned detection tokens appended to the patch
    tokens, position embeddings added again before every layer (its mid position
    embeddings), pre-norm ViT layers; a Linear on the mean of the detection tokens' final
    states, where its box and class heads would read."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import YolosConfig, YolosModel

        _hf_quiet()
        cfg = YolosConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            image_size=(IMAGE, IMAGE), patch_size=4, num_detection_tokens=10,
            use_mid_position_embeddings=True,
        )  # fmt: skip
        self.yolos = YolosModel(cfg, add_pooling_layer=False)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.yolos(images).last_hidden_state[:, -10:].mean(1))


def _gemma2() -> nn.Module:
    from transformers import Gemma2Config, Gemma2ForCausalLM

    _hf_quiet()
    # Gemma 2: a causal LM whose layers alternate sliding-window (16 tokens here, layer 0) and
    # global attention (layer 1), GQA with rotary positions and a fixed query scale, attention
    # logits soft-capped by tanh (50) and so are the final logits (30); "sandwich" RMS norms
    # (each of attention and MLP has a norm before and another after it, zero-centred weights:
    # 1 + w), a GeGLU MLP, sqrt(d)-scaled token embeddings tied to the output head.
    cfg = Gemma2Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16,
        sliding_window=SEQ // 2, max_position_embeddings=SEQ, use_cache=False,
        bos_token_id=0, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    return Gemma2ForCausalLM(cfg)


def _mobilebert() -> nn.Module:
    from transformers import MobileBertConfig, MobileBertForMaskedLM

    _hf_quiet()
    # MobileBERT, a narrow BERT built for phones: 32-wide token embeddings whose trigrams (each
    # token beside its two neighbours) a Linear widens to the 64-wide inter-block state; in
    # every layer bottleneck Linears narrow that state to 32 (one shared by queries and keys,
    # one for the residual; values read the wide state), attention and a stack of MLPs (two
    # here, four in the paper) work at 32, then a Linear widens back to 64; post-norm with
    # NoNorm (an elementwise scale and shift, no statistics) in place of LayerNorm, ReLU MLPs;
    # the MLM head's output matrix is the tied 32-wide embeddings plus its own extra rows.
    cfg = MobileBertConfig(
        vocab_size=VOCAB, hidden_size=64, embedding_size=32, intra_bottleneck_size=32,
        intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_feedforward_networks=2, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return MobileBertForMaskedLM(cfg)


class _Pixtral(nn.Module):
    """Pixtral's vision encoder with a classifier: a bias-free patch convolution and an RMSNorm,
    every image's patches packed into one sequence (a block-diagonal mask keeps each image to
    itself, as Pixtral reads images of any size side by side), 2-D axial rotary positions
    (row and column frequencies interleaved across each head), pre-norm RMSNorm layers with a
    SwiGLU MLP, no class token; a Linear on the mean of each image's final patch states."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import PixtralVisionConfig, PixtralVisionModel

        _hf_quiet()
        cfg = PixtralVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=4, hidden_act="silu",
        )  # fmt: skip
        self.encoder = PixtralVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        packed = self.encoder(images).last_hidden_state  # (1, images x patches, hidden)
        return self.head(packed.reshape(images.shape[0], -1, packed.shape[-1]).mean(1))


class _WavTokenizer(nn.Module):
    """WavTokenizer's decoder (a Vocos vocoder) reading spectrogram frames where it reads its
    codes' embeddings: a 7-wide convolution, a positional net (GroupNorm-SiLU-conv residual
    blocks around a single-head self-attention over the frames made of 1x1 convolutions),
    an adaptive LayerNorm (scale and shift looked up per bandwidth, id 0 here), ConvNeXt
    blocks (a depthwise 7-wide convolution, adaptive LayerNorm, a GELU MLP, a per-channel
    scale) and a LayerNorm; a Linear makes each frame's log-magnitude and phase, and an
    inverse STFT (64-point, hop 16) overlaps-adds them into the waveform. No upsampling
    convolution, no BatchNorm. It reads the spectrogram only (the noise sequence _spectra
    packs beside it goes unused); the positional net's dropout is off (it draws randoms)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import WavTokenizerConfig, WavTokenizerModel

        _hf_quiet()
        cfg = WavTokenizerConfig(
            upsampling_ratios=[4, 4], hidden_size=BINS, codebook_dim=BINS, codebook_size=16,
            num_filters=8, num_lstm_layers=1, decoder_hidden_size=64,
            decoder_intermediate_size=128, decoder_num_layers=2, decoder_attention_num_groups=8,
        )  # fmt: skip
        codec = WavTokenizerModel(cfg)  # initialized by its own rule; its encoder is dropped
        self.backbone, self.head = codec.backbone, codec.head
        for module in self.backbone.modules():
            if isinstance(module, nn.Dropout):
                module.p = 0.0
        self.bandwidth = nn.Buffer(torch.zeros(1, dtype=torch.long), persistent=False)

    def forward(self, input_features: torch.Tensor, noise_sequence: torch.Tensor) -> VocoderWaves:
        del noise_sequence
        frames = self.backbone(input_features.transpose(1, 2), self.bandwidth)
        return VocoderWaves(self.head(frames)[:, 0])


def _timesformer() -> nn.Module:
    from transformers import TimesformerConfig, TimesformerForVideoClassification

    _hf_quiet()
    # TimeSformer, a video transformer with divided space-time attention: every frame's patches
    # made by one patch convolution, a class token, learned space and time position
    # embeddings; in each pre-norm layer first a temporal attention (each patch position
    # across the frames, with its own LayerNorm and a Linear after it), then a spatial
    # attention (each frame's patches with a copy of the class token, whose outputs are
    # averaged back over the frames), then a GELU MLP; a Linear on the final-norm class token.
    cfg = TimesformerConfig(
        image_size=IMAGE, patch_size=4, num_channels=3, num_frames=CLIP, hidden_size=64,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        num_labels=CLASSES, attention_type="divided_space_time", drop_path_rate=0,
    )  # fmt: skip
    return TimesformerForVideoClassification(cfg)


def _apertus() -> nn.Module:
    from transformers import ApertusConfig, ApertusForCausalLM

    _hf_quiet()
    # Apertus, the Swiss AI open LLM: a Llama-style causal LM (GQA, rotary positions with Llama
    # 3's frequency scaling, pre-norm RMS norms, an untied output head) whose queries and keys
    # are RMS-normed per head (QK-norm) before they are rotated, and whose MLP is not gated:
    # up_proj, then xIELU (a trainable activation, quadratic above zero and ELU-like below,
    # its two slopes learned in every layer), then down_proj.
    cfg = ApertusConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        use_cache=False, bos_token_id=0, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    return ApertusForCausalLM(cfg)


def _nomic_bert() -> nn.Module:
    from transformers import NomicBertConfig, NomicBertForMaskedLM

    _hf_quiet()
    # NomicBERT (nomic-embed-text's encoder): post-norm as BERT (a LayerNorm after the
    # embeddings and after each residual add) but without position embeddings: rotary
    # positions in bias-free bidirectional attention, a bias-free SwiGLU MLP, token-type
    # embeddings added to the tokens'; the MLM head (a dense layer, SiLU, LayerNorm) reads out
    # through the tied token embeddings.
    cfg = NomicBertConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=SEQ,
    )  # fmt: skip
    return NomicBertForMaskedLM(cfg)


class _Mlcd(nn.Module):
    """MLCD's vision tower (DeepGlint's CLIP-style ViT trained by multi-label cluster
    discrimination) with a classifier: a bias-free patch convolution and a class token but no
    absolute positions: 2-D axial rotary positions in every attention (row and column angles,
    each over half of the head's pairs), the class token turned by learned angles of its own;
    a LayerNorm before the layers (CLIP's pre-norm), pre-norm LayerNorm layers with a GELU
    MLP; a Linear on the final-norm class token."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import MLCDVisionConfig, MLCDVisionModel

        _hf_quiet()
        cfg = MLCDVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=4,
        )  # fmt: skip
        self.vision = MLCDVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).pooler_output)


class _PeAudio(nn.Module):
    """PE-Audio's audio encoder (Meta's Perception Encoder, the audio tower of its audio-text
    model) with a classifier: a DAC codec encoder (a 7-wide convolution, blocks of dilated
    Snake-activated residual units and a strided convolution, 4 x 4 = 16 samples a frame here)
    and a 1x1 bottleneck to the codec's 8-wide latent, both run under no_grad as the model
    runs them (frozen: pretrained in the model, at torch's default convolution initialization
    here, as the model's own rule, std 0.02, shrinks a wave twenty-thousandfold through the
    untrained codec, its tokens' mean square far below the RMS norms' epsilon); a Linear makes
    each codec frame a token, a class token is prepended and a residual block of two
    GroupNorm-SiLU-convolution steps mixes neighbouring frames; pre-norm RMSNorm layers with
    per-head QK-norm, rotary positions (rotating interleaved pairs) and a SwiGLU MLP; a final
    RMSNorm and a Linear; a Linear on the class token's output."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import PeAudioEncoder, PeAudioEncoderConfig

        _hf_quiet()
        cfg = PeAudioEncoderConfig(
            dac_config={"encoder_hidden_size": 8, "downsampling_ratios": [4, 4],
                        "codebook_dim": 8},
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            head_dim=16, max_position_embeddings=SEQ * 2,
        )  # fmt: skip
        self.encoder = PeAudioEncoder(cfg)
        for module in self.encoder.embedder.modules():
            if isinstance(module, nn.Conv1d):
                module.reset_parameters()
        self.head = nn.Linear(64, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves[:, None]).pooler_output)


def _timesfm2_5() -> nn.Module:
    from transformers import TimesFm2_5Config, TimesFm2_5ModelForPrediction

    _hf_quiet()
    # TimesFM 2.5, TimesFM's decoder-only forecaster rebuilt: each series (one channel,
    # univariate) is standardized by its context's statistics, cut into 4 patches of 8 steps,
    # each patch standardized again by the running (Welford) statistics of the patches so far;
    # a residual MLP block (fed the patch and its padding mask) makes each patch a token;
    # causal attention with rotary positions, per-head RMS norms on the rotated queries and
    # keys and a learned per-dimension query scale; "sandwich" RMS norms (before and after both
    # attention and MLP), an ungated SiLU MLP; residual MLP heads forecast the next 8 steps
    # (a mean and nine quantiles, and a continuous quantile head) from the last patch's token,
    # the running statistics undone; the forecast of the negated series, negated back, is
    # averaged in (flip invariance).
    cfg = TimesFm2_5Config(
        patch_length=8, context_length=CONTEXT, horizon_length=HORIZON, num_hidden_layers=2,
        hidden_size=32, intermediate_size=64, head_dim=16, num_attention_heads=2,
        num_key_value_heads=2, output_quantile_len=HORIZON, max_position_embeddings=CONTEXT,
    )  # fmt: skip
    return TimesFm2_5ModelForPrediction(cfg)


def _nemotron() -> nn.Module:
    from transformers import NemotronConfig, NemotronForCausalLM

    _hf_quiet()
    # Nemotron (NVIDIA's Nemotron-4 and Minitron LLMs): a pre-norm causal LM whose norms are
    # LayerNorm1P (a LayerNorm with a bias whose gain is 1 + its weight, the weight stored
    # centred on zero; the library initializes it at one), GQA with rotary positions on half of
    # each head's dimensions (the other half unrotated), an ungated MLP (up_proj, squared ReLU,
    # down_proj), no biases in its projections, an untied output head.
    cfg = NemotronConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        use_cache=False, bos_token_id=0, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    return NemotronForCausalLM(cfg)


def _xmod() -> nn.Module:
    from transformers import XmodConfig, XmodForMaskedLM

    _hf_quiet()
    # X-MOD (Meta's modular multilingual RoBERTa): RoBERTa's post-norm masked LM (learned
    # absolute positions counted past the padding index, token types, a LayerNorm on the
    # embeddings) whose every layer ends in a language adapter: the MLP's output, added to its
    # input and LayerNormed, feeds a bottleneck of its language's own (dense1 to half the
    # width, GELU, dense2), whose output is added back to that normed input; one language here,
    # the default. The MLM head (a dense layer, GELU, LayerNorm) reads out through the tied word
    # embeddings. Its padding index is 1, the masked loss's mask token, as MPNet's: masked
    # tokens get no position embedding (that row is zero and frozen) and shift later positions.
    cfg = XmodConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=SEQ + 2, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pad_token_id=1, languages=("en_XX",),
        default_language="en_XX",
    )  # fmt: skip
    return XmodForMaskedLM(cfg)


class _PPLCNetV4(nn.Module):
    """PP-LCNetV4's backbone (PaddleOCR's) with a classifier: PP-HGNetV2's stem (a stride-2
    3x3 convolution; beside a max pool of its output, a pair of 2x2 convolutions, halving the
    channels and back; the two concatenated, then a 3x3 (stride 1 here, not 2: 16-pixel images)
    and a 1x1 convolution; each convolution-BatchNorm-ReLU), then blocks that mix space and then
    channels: a depthwise 3x3 token convolution (plain, with a bias, where the block keeps its
    shape and is residual; a convolution-BatchNorm where it widens or strides),
    squeeze-and-excitation in some blocks, a channel MLP of two 1x1 convolution-BatchNorm layers
    with GELU between them, added to the token convolution's output where the block is
    residual. Global average pooling and a Linear on the last stage's map. BatchNorm
    throughout."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import PPLCNetV4Backbone, PPLCNetV4Config

        _hf_quiet()
        cfg = PPLCNetV4Config(
            stem_channels=[3, 8, 16], stem_strides=[2, 1, 1, 1, 1],
            block_configs=[[[3, 16, 16, 1, True]], [[3, 16, 24, 1, False], [3, 24, 24, 1, False]],
                           [[3, 24, 32, 2, False], [3, 32, 32, 1, True]],
                           [[3, 32, 64, 2, False], [3, 64, 64, 1, True]]],
            out_features=["stage4"],
        )  # fmt: skip
        self.backbone = PPLCNetV4Backbone(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(images).feature_maps[-1].mean((2, 3)))


class _VibeVoice(nn.Module):
    """VibeVoice's acoustic tokenizer encoder (Microsoft's sigma-VAE speech codec, the one whose
    latents VibeVoice's TTS models read) with a classifier: every convolution causal (padded on
    the left only): a 7-wide stem convolution, then stages of 1-d ConvNeXt blocks (an RMS norm
    over the channels, a depthwise 7-wide convolution, a layer scale (initialized at 1e-6) and a
    residual add; an RMS norm, a GELU MLP of two Linears, a layer scale and a residual add), each
    stage after the first opened by a strided convolution (4 x 4 = 16 samples a frame here)
    doubling the channels; a 7-wide convolution makes the latent frames (the noise the full
    sigma-VAE adds to them is drawn outside the encoder: none here). A Linear on the latent
    frames' mean."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import (
            VibeVoiceAcousticTokenizerEncoderConfig,
            VibeVoiceAcousticTokenizerEncoderModel,
        )

        _hf_quiet()
        cfg = VibeVoiceAcousticTokenizerEncoderConfig(
            channels=1, hidden_size=32, kernel_size=7, num_filters=16, downsampling_ratios=[4, 4],
            depths=[2, 2, 2],
        )  # fmt: skip
        self.encoder = VibeVoiceAcousticTokenizerEncoderModel(cfg)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves[:, None]).latents.mean(1))


def _kimi_linear() -> nn.Module:
    from transformers import KimiLinearConfig, KimiLinearForCausalLM

    _hf_quiet()
    # Kimi Linear (Moonshot's hybrid linear-attention LLM): Kimi Delta Attention layers (queries,
    # keys and values each projected, then a short causal depthwise convolution and SiLU,
    # queries and keys L2-normed; a gated delta rule whose state decays by a per-channel forget
    # gate, a low-rank projection through a softplus, and is written with a per-head strength,
    # the sigmoid of a projection; the output RMS-normed and gated by the sigmoid of another
    # low-rank projection) interleaved with MLA full-attention layers (DeepSeek's keys and values
    # decompressed from a normed latent, no positions at all: NoPE); pre-norm RMS norms; the
    # first layer's MLP a dense SwiGLU, the others a mixture of experts (sigmoid router with a
    # score correction bias, top 2 of 4 SwiGLU experts, their weights renormalized and scaled,
    # beside a shared SwiGLU expert). Here layer 0 is KDA with the dense MLP, layer 1 MLA with
    # the mixture.
    cfg = KimiLinearConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=32,
        q_lora_rank=None, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
        num_local_experts=4, num_experts_per_tok=2, n_shared_experts=1,
        layer_types=["linear_attention", "full_attention"], mlp_layer_types=["dense", "sparse"],
        linear_head_dim=16, linear_num_heads=4, max_position_embeddings=SEQ, use_cache=False,
        pad_token_id=0, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return KimiLinearForCausalLM(cfg)


def _stablelm() -> nn.Module:
    from transformers import StableLmConfig, StableLmForCausalLM

    _hf_quiet()
    # StableLM 2 (Stability AI's; its 12B's layout): a causal LM whose layers are parallel
    # (attention and MLP both read one LayerNorm of the input and are added to it together, as
    # GPT-NeoX's), whose queries and keys are LayerNormed per head (a bias-free LayerNorm of
    # each head's own) before rotary positions on the first quarter of each head's dimensions
    # (the other three quarters unrotated); GQA, no biases in its projections, a SwiGLU MLP,
    # LayerNorms with biases, an untied output head.
    cfg = StableLmConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        use_qkv_bias=False, qk_layernorm=True, use_parallel_residual=True, use_cache=False,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return StableLmForCausalLM(cfg)


def _longformer() -> nn.Module:
    from transformers import LongformerConfig, LongformerForMaskedLM

    _hf_quiet()
    # Longformer (AllenAI's long-document RoBERTa): RoBERTa's post-norm masked LM (learned
    # absolute positions counted past the padding index, token types, a LayerNorm on the
    # embeddings; the MLM head a dense layer, GELU and LayerNorm read out through the tied word
    # embeddings) whose self-attention is local: each token attends to a sliding window of its
    # neighbours on either side (512 wide in the released models, 8 here: 4 each side and
    # itself), computed as banded matmuls over overlapping chunks of the sequence. Tokens a task
    # marks global attend to and are attended by every token through query, key and value
    # projections of their own; masked-LM pretraining marks none, and neither does this one:
    # those projections go unused. Its padding index is 1, the masked loss's mask token, as
    # X-MOD's: masked tokens get no position embedding (that row is zero and frozen) and shift
    # later positions.
    cfg = LongformerConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=SEQ + 2, attention_window=8,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1,
    )  # fmt: skip
    return LongformerForMaskedLM(cfg)


class _Pix2Struct(nn.Module):
    """Pix2Struct's image encoder (Google's screenshot-parsing image-to-text model; MatCha's and
    DePlot's too) with a classifier: each image standardized by its own mean and deviation and
    cut into patches (4x4 here, 16x16 in the released models), each flattened behind its
    1-based row and column numbers, as its image processor does (whose resize to its patch
    budget keeps a 16x16 image's size at 16 patches); a Linear projects each patch, to which
    learned row and column embeddings are added (2-d absolute positions, no class token);
    pre-norm T5 layers: T5's RMS norms (no mean, no bias), attention without biases or a
    1/sqrt(d) scale, a gated-GELU MLP (wi_0 GELU'd times wi_1, then wo); a final RMS norm. A
    Linear on the patch tokens' mean. The library's init range for this encoder (1e-10, a
    placeholder its converted checkpoints overwrite) would start every projection at zero:
    0.02 here, as ViT's."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Pix2StructVisionConfig, Pix2StructVisionModel

        _hf_quiet()
        cfg = Pix2StructVisionConfig(
            hidden_size=64, patch_embed_hidden_size=3 * 4 * 4, d_ff=128, d_kv=16,
            num_hidden_layers=2, num_attention_heads=4, seq_len=16, initializer_range=0.02,
        )  # fmt: skip
        self.backbone = Pix2StructVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        n, c, h, w = images.shape
        std = images.std(dim=(1, 2, 3), keepdim=True).clamp_min((c * h * w) ** -0.5)
        images = (images - images.mean(dim=(1, 2, 3), keepdim=True)) / std
        # Patches flattened (row, column, channel) within, in rows of columns, as the processor.
        patches = nn.functional.unfold(images, 4, stride=4).reshape(n, c, 4, 4, -1)
        patches = patches.permute(0, 4, 2, 3, 1).reshape(n, -1, c * 16)
        grid = torch.arange(h // 4, dtype=images.dtype) + 1
        rows = grid.repeat_interleave(w // 4).expand(n, -1)[..., None]
        cols = grid.repeat(h // 4).expand(n, -1)[..., None]
        flat = torch.cat([rows, cols, patches], -1)
        return self.head(self.backbone(flattened_patches=flat).last_hidden_state.mean(1))


class _MoonshineStreaming(nn.Module):
    """Moonshine Streaming's speech encoder (Useful Sensors' low-latency ASR) with a classifier:
    the raw waveform cut into 5 ms frames (80 samples), each centred and scaled by its own RMS
    (CMVN per frame), compressed by asinh(k x) with a learned k, projected by a Linear without
    bias and SiLU'd; two causal convolutions (kernel 5, stride 2, padded on the left only; SiLU
    between them) make one token every 20 ms; pre-norm transformer layers with no positions at
    all (the causal convolutions carry them), each attending within a sliding window of its own
    (in the released models 16 tokens back, and 3 ahead in the first and last two layers, none
    in the middle ones), a GELU MLP, LayerNorms whose gain is 1 + a weight stored centred on
    zero; a final such norm. Mean pooling over the tokens and a Linear. The sliding windows are
    masks built only from an attention mask: one of ones is passed. The 320 samples of _waves
    are resampled (linearly) to ten times their rate, 3200 samples: 40 frames, 10 tokens, windows
    of 4 tokens back (layer 0: and 1 ahead; layer 1: none)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import MoonshineStreamingEncoderConfig
        from transformers.models.moonshine_streaming.modeling_moonshine_streaming import (
            MoonshineStreamingEncoder,
        )

        _hf_quiet()
        cfg = MoonshineStreamingEncoderConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=4, sliding_windows=[[4, 2], [4, 0]],
        )  # fmt: skip
        self.encoder = MoonshineStreamingEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        waves = nn.functional.interpolate(waves[:, None], scale_factor=10, mode="linear")[:, 0]
        mask = torch.ones_like(waves, dtype=torch.long)
        return self.head(self.encoder(waves, attention_mask=mask).last_hidden_state.mean(1))


def _llama4() -> nn.Module:
    from transformers import Llama4ForCausalLM, Llama4TextConfig

    _hf_quiet()
    # Llama 4 (Meta's; Scout's text model): a pre-norm causal LM (RMS norms, GQA, no biases, an
    # untied output head) whose layers interleave two attentions: three in four rotate
    # interleaved pairs of each head's dimensions (RoPE, theta 500000), then L2-normalize the
    # queries and keys (a weightless RMS norm), and attend only within chunks of the sequence
    # (8192 tokens, causal inside a chunk); every fourth has no positions at all (NoPE), attends
    # to the whole causal past and scales its queries by a temperature growing with the log of
    # the position (1 + 0.1 log(1 + floor((p + 1) / 8192))). Every layer's MLP is a mixture of
    # experts: a router whose top-1 logit's sigmoid scales the token before its expert (SwiGLU
    # experts fused into (experts, in, 2 x out) and (experts, out, in) tensors, every expert
    # run on every token through batched matmuls, the unrouted ones on zeros), beside a shared
    # SwiGLU expert every token goes through. Here layer 0 is chunked RoPE attention (chunks of
    # 8 tokens), layer 1 NoPE (its temperature's floor scaled down to 8 with the chunks), each
    # with a mixture of four experts.
    cfg = Llama4TextConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=1,
        no_rope_layers=[1, 0], attention_chunk_size=8, floor_scale=8,
        max_position_embeddings=SEQ, use_cache=False,
    )  # fmt: skip
    return Llama4ForCausalLM(cfg)


def _glm4() -> nn.Module:
    from transformers import Glm4Config, Glm4ForCausalLM

    _hf_quiet()
    # GLM-4 (Zhipu AI's; GLM-4-0414's layout): a causal LM whose layers are sandwich-normed: four
    # RMS norms a layer, one in front of each sublayer (input_layernorm before the attention,
    # post_attention_layernorm before the MLP) and one on each sublayer's output before it
    # joins the residual (post_self_attn_layernorm, post_mlp_layernorm), as Gemma 2's; GQA with
    # biases on the query, key and value projections only; rotary positions on the first half
    # of each head's dimensions, rotating adjacent (interleaved) pairs, the other half
    # unrotated; a SwiGLU MLP whose gate and up projections are one fused Linear (gate_up_proj,
    # its first half the gate), an untied output head.
    cfg = Glm4Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return Glm4ForCausalLM(cfg)


def _dbrx() -> nn.Module:
    from transformers import DbrxConfig, DbrxForCausalLM

    _hf_quiet()
    # DBRX (Databricks'): a pre-norm causal LM with LayerNorms without biases and no biases in
    # any projection; its attention's query, key and value come from one fused Linear (Wqkv,
    # GQA) whose outputs are clamped to [-8, 8] (clip_qkv) before rotary positions (theta
    # 500000); every layer's MLP is a fine-grained mixture of experts (16 experts, 4 a token,
    # in the released model): a bias-free router's softmax, its top-k weights renormalized to
    # sum to one (an L1 norm), SwiGLU experts whose gate (w1), up (v1) and down (w2) weights
    # are each one (experts x expert width, model width) tensor, run expert by expert on their
    # tokens; no shared expert; a final bias-free LayerNorm, an untied output head. Here 8
    # experts, 2 a token (the same share). Its attention reads a rope_theta its attention
    # config does not define: given there too (the rotary embedding reads rope_parameters).
    cfg = DbrxConfig(
        d_model=64, n_heads=4, n_layers=2, max_seq_len=SEQ, vocab_size=VOCAB,
        attn_config={"clip_qkv": 8.0, "kv_n_heads": 2, "rope_theta": 500000.0},
        ffn_config={"ffn_hidden_size": 64, "moe_num_experts": 8, "moe_top_k": 2},
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, use_cache=False,
    )  # fmt: skip
    return DbrxForCausalLM(cfg)


def _eurobert() -> nn.Module:
    from transformers import EuroBertConfig, EuroBertForMaskedLM

    _hf_quiet()
    # EuroBERT (a European multilingual encoder family): Llama's layer read both ways, a
    # bidirectional masked LM: pre-norm RMS norms, rotary positions, no biases, a SwiGLU MLP, a
    # final RMS norm; its masked-LM head one Linear (no dense, activation or norm in front,
    # untied from the token embeddings). No token types, no absolute positions. Its padding
    # token here is 0 (BERT's; that embedding row stays zero), its mask token 1.
    cfg = EuroBertConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ,
        pad_token_id=0, bos_token_id=0, eos_token_id=0, mask_token_id=1, use_cache=False,
    )  # fmt: skip
    return EuroBertForMaskedLM(cfg)


class _ImageGpt(nn.Module):
    """ImageGPT (OpenAI's iGPT) with its classification head: an image read as a sequence, a
    causal transformer over its pixels in raster order, each pixel replaced by the index of its
    nearest colour cluster, as its image processor does (512 k-means centroids of ImageNet's
    pixels in the released models; here 128 colours drawn once from the images' own
    distribution, a fixed buffer; distances taken element by element in float64, so every split
    of a batch quantizes alike); GPT-2's pre-norm blocks (a fused c_attn, learned absolute
    positions) with its own norm, a LayerNorm that neither centres nor has a bias (x over its
    root mean square, times a gain), and a quick-GELU MLP (x sigmoid(1.702 x)); a final such
    norm. ImageGPTForImageClassification average-pools the hidden states over the pixels and
    scores them with a bias-free Linear. 16x16 images: 256 tokens."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import ImageGPTConfig, ImageGPTForImageClassification

        _hf_quiet()
        cfg = ImageGPTConfig(
            vocab_size=VOCAB + 1, n_positions=IMAGE * IMAGE, n_embd=64, n_layer=2, n_head=4,
            n_inner=128, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, num_labels=CLASSES,
            use_cache=False,
        )  # fmt: skip
        self.gpt = ImageGPTForImageClassification(cfg)
        # The images' pixels: a prototype's N(0, 1) plus N(0, 0.8^2) noise.
        colours = torch.randn(VOCAB, 3, generator=torch.Generator().manual_seed(0)) * 1.28
        self.register_buffer("clusters", colours, persistent=False)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        pixels = images.flatten(2).transpose(1, 2).double()
        ids = ((pixels[:, :, None] - self.clusters.double()) ** 2).sum(-1).argmin(-1)
        return self.gpt(input_ids=ids).logits


class _SpeechT5(nn.Module):
    """SpeechT5's speech encoder (Microsoft's unified speech-text model; its speech recognition
    and voice conversion read speech through it) with a classifier. Its speech prenet is
    wav2vec 2.0's: a strided conv1d feature encoder without biases (GroupNorm on its first
    layer, GELU), a LayerNorm and a Linear feature projection, a weight-normed grouped
    convolutional position embedding added; then fairseq's sinusoidal absolute positions added
    as well. Its shared encoder: a LayerNorm on its input, then post-norm layers (attention,
    add, LayerNorm; GELU MLP, add, LayerNorm) whose attention adds relative-position terms
    (Shaw et al.'s): each query's dot products with learned embeddings of each key's offset
    from it (clipped at 160 either way), one table of head-size vectors that every layer and
    head shares. Mean pooling over the frames and a Linear. SpecAugment and LayerDrop off: both
    draw randoms. The feature encoder's two layers as Wav2Vec2's here: 31 frames."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import SpeechT5Config
        from transformers.models.speecht5.modeling_speecht5 import (
            SpeechT5EncoderWithSpeechPrenet,
        )

        _hf_quiet()
        cfg = SpeechT5Config(
            hidden_size=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
            decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128,
            conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), feat_extract_norm="group",
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
            hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            positional_dropout=0.0, feat_proj_dropout=0.0, encoder_layerdrop=0.0,
            apply_spec_augment=False, mask_time_prob=0.0,
        )  # fmt: skip
        self.encoder = SpeechT5EncoderWithSpeechPrenet(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(waves).last_hidden_state.mean(1))


def _exaone4() -> nn.Module:
    from transformers import Exaone4Config, Exaone4ForCausalLM

    _hf_quiet()
    # EXAONE 4.0 (LG AI Research's): a causal LM whose layers have no norm in front of either
    # sublayer: an RMS norm on each sublayer's output before it joins the residual
    # (post_attention_layernorm, post_feedforward_layernorm; its "QK-Reorder-LN"), and per-head
    # RMS norms on the queries and keys (q_norm, k_norm) before the positions; GQA, no biases;
    # a hybrid of local and global attention (three in four layers attend within a sliding
    # window of 4096 tokens and rotate their queries and keys, every fourth attends to the
    # whole causal past with no positions at all, NoPE); a SwiGLU MLP, a final RMS norm, an
    # untied output head. Here layer 0 is local (an 8-token window, RoPE), layer 1 global.
    cfg = Exaone4Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        sliding_window=8, sliding_window_pattern=2, use_cache=False, pad_token_id=0,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return Exaone4ForCausalLM(cfg)


class _Xlm(nn.Module):
    """XLM (Facebook's cross-lingual language model, Lample and Conneau's) in its masked-LM
    form: token embeddings plus learned absolute positions, a LayerNorm on their sum; post-norm
    layers (attention, add, LayerNorm; a GELU MLP four times the width, add, LayerNorm) with
    biases everywhere, its own attention code (the queries divided by the root of the head
    size before the dot products); a prediction layer that is one Linear with a bias, its
    weight tied to the token embeddings (no dense, activation or norm in front). No language
    embeddings here (one language, as its English MLM model), no token types. XLM takes each
    sequence's length from its count of non-padding tokens and masks what lies past it: these
    chains draw every token, padding's 0 (BERT's; that embedding row stays zero) too, so the
    lengths are given in full, every sequence filling its window."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import XLMConfig, XLMWithLMHeadModel

        _hf_quiet()
        cfg = XLMConfig(
            vocab_size=VOCAB, emb_dim=64, n_layers=2, n_heads=4, dropout=0.0,
            attention_dropout=0.0, max_position_embeddings=SEQ, n_langs=1,
            embed_init_std=64**-0.5, pad_token_id=0, bos_token_id=0, eos_token_id=0,
            mask_token_id=1,
        )  # fmt: skip
        self.xlm = XLMWithLMHeadModel(cfg)

    def forward(self, input_ids: torch.Tensor) -> object:
        lengths = torch.full((input_ids.shape[0],), input_ids.shape[1], dtype=torch.long)
        return self.xlm(input_ids=input_ids, lengths=lengths)


class _XClipVision(nn.Module):
    """X-CLIP's video encoder (Microsoft's video extension of CLIP) with a classifier: CLIP's
    ViT run on every frame (a bias-free patch convolution, a class token, learned absolute
    positions, a LayerNorm before the layers, pre-norm LayerNorm layers with a quick-GELU MLP)
    with cross-frame communication: in every layer each frame's class token is projected
    (message_fc) into a message token, the clip's message tokens attend to one another
    (message_ln, then message_attn, added back), and each frame's attention then reads its
    own patches plus its message token, which is dropped again before the MLP; a final
    LayerNorm on each frame's class token. X-CLIP's multi-frame integration transformer and
    its text-side prompts are left out: the frames' mean and a Linear. Here 4 frames of 4x4
    patches: 17 tokens a frame, 18 in its attention with the message."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import XCLIPVisionConfig, XCLIPVisionModel

        _hf_quiet()
        cfg = XCLIPVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=4, num_frames=CLIP, drop_path_rate=0.0,
        )  # fmt: skip
        self.vision = XCLIPVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        # (batch, frames, channels, height, width): the frames as one batch, clip by clip.
        frames = self.vision(clips.flatten(0, 1)).pooler_output
        return self.head(frames.reshape(clips.shape[0], CLIP, -1).mean(1))


class _Radio(nn.Module):
    """RADIO (NVIDIA's C-RADIO, a ViT distilled from several teachers at once) with a
    classifier: the pixels normalized by CLIP's mean and deviation inside the model; each
    image cut into patches and embedded by one bias-free Linear; its cropped position
    embedding (CPE): one table for the largest image it takes (2048 pixels square), resized
    bilinearly to the image's grid and added; three class (summary) tokens and seven register
    tokens in front; pre-norm LayerNorm layers with a GELU MLP and LayerScale gains (at one:
    C-RADIO has none, transformers' class keeps them, trained here); no final norm. Its summary
    is its first two class tokens side by side: a Linear on it. Here a table for 32 pixels
    square (8x8 patches) resized to the 4x4 patch grid of these 16x16 images."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import RadioConfig, RadioModel

        _hf_quiet()
        cfg = RadioConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2.0,
            patch_size=4, image_size=IMAGE, max_img_size=2 * IMAGE, num_cls_tokens=3,
            num_registers=7, summary_idxs=[0, 1],
        )  # fmt: skip
        self.radio = RadioModel(cfg)
        self.head = nn.Linear(2 * 64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.radio(images).summary)


class _ClapAudio(nn.Module):
    """CLAP's audio encoder (LAION's contrastive language-audio model; its audio tower is
    HTSAT, a Swin transformer over spectrograms) with a classifier. A BatchNorm over the mel
    bins of the log-mel input (each bin a channel); the spectrogram folded into a square
    image: its frames stretched by bicubic interpolation to spec_size x freq_ratio, cut into
    freq_ratio pieces stacked along the frequency axis (256 frames by 64 bins, freq_ratio 4,
    in the released models); a patch convolution and a LayerNorm; Swin stages (attention
    inside windows, shifted every other block, with a relative position bias table; a GELU
    MLP; pre-norm LayerNorms), patch merging between them; a final LayerNorm, the tokens
    regrouped by frequency and averaged. A Linear on that mean. Fusion off (one crop of
    each clip). Here 32 frames by 16 bins, stretched to 64 frames, folded into 32x32: 8x8
    patches in 4x4 windows, then 4x4 tokens. BatchNorm at its input."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import ClapAudioConfig, ClapAudioModel

        _hf_quiet()
        cfg = ClapAudioConfig(
            spec_size=32, num_mel_bins=MELS, patch_size=4, patch_stride=(4, 4), window_size=4,
            patch_embeds_hidden_size=32, depths=[2, 2], num_attention_heads=[2, 4],
            mlp_ratio=2.0, hidden_size=64, enable_fusion=False, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
        )  # fmt: skip
        self.clap = ClapAudioModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        # (batch, 1, frames, bins): one crop of each clip, as its feature extractor writes it.
        return self.head(self.clap(input_features=maps).pooler_output)


def _arcee() -> nn.Module:
    from transformers import ArceeConfig, ArceeForCausalLM

    _hf_quiet()
    # Arcee's AFM (Arcee Foundation Model): a Llama-style causal LM (pre-norm RMS norms, GQA,
    # rotary positions, no biases, a final RMS norm, an untied output head) whose MLP has no
    # gate: up_proj, a squared ReLU (relu(x)^2), down_proj.
    cfg = ArceeConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
        tie_word_embeddings=False,
    )  # fmt: skip
    return ArceeForCausalLM(cfg)


def _rembert() -> nn.Module:
    from transformers import RemBertConfig, RemBertForMaskedLM

    _hf_quiet()
    # RemBERT (Google's, "rethinking embedding coupling"): BERT's post-norm encoder (attention,
    # add, LayerNorm; a GELU MLP, add, LayerNorm; biases everywhere) with its input and output
    # embeddings decoupled from the hidden size: token, position and token-type embeddings of
    # a smaller size (256 beside a hidden size of 1152 in the released model), a LayerNorm on
    # their sum, and a Linear that lifts them to the hidden size in front of layer 0
    # (embedding_hidden_mapping_in); an untied prediction head of a larger size (a dense layer
    # to 1664, GELU, LayerNorm, a Linear to the vocabulary). Here 32, 64 and 128.
    cfg = RemBertConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        input_embedding_size=32, output_embedding_size=128, intermediate_size=128,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
        max_position_embeddings=SEQ, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return RemBertForMaskedLM(cfg)


class _GroupVit(nn.Module):
    """GroupViT's image encoder (NVIDIA's, grouping trained by text alone) with a classifier:
    a patch convolution, a LayerNorm, learned absolute positions (no class token); pre-norm
    LayerNorm layers with a GELU MLP, in stages. In the first stage learned group tokens join
    the patches in every layer's attention; at its end a grouping block merges the patches
    into segments: the group tokens, normalized, mixed across tokens by an MLP down to the
    number of segments (mlp_inter), cross-attend to the patches (pre_assign_attn); then each
    patch goes to one segment by a hard argmax over the segments' attention logits (the
    gradient straight through their softmax), each segment the sum of its patches' values over
    their count plus one, projected, plus its group token, then an MLP. The next stage's layers
    run on the segments; a final LayerNorm, their mean, a Linear. The released model (two
    grouping stages: 64 group tokens into 64 segments, then 8 into 8) adds Gumbel noise to the
    assignment in training: drawn afresh for each micro-batch, that noise would make another
    accumulation split another training, not round-off, so the assignment keeps its inference
    form in training too. Here 16 patches (4x4 pixels each), 8 group tokens into 4 segments,
    two layers before the grouping and two after."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import GroupViTVisionConfig, GroupViTVisionModel

        _hf_quiet()
        cfg = GroupViTVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=4, depths=[2, 2],
            num_group_tokens=[8, 0], num_output_groups=[4, 4], num_attention_heads=4,
            image_size=IMAGE, patch_size=4,
        )  # fmt: skip
        self.vision = GroupViTVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)
        self.train()

    def train(self, mode: bool = True) -> _GroupVit:
        super().train(mode)
        # No Gumbel noise: the assignment's own module stays in its inference form.
        for module in self.modules():
            if type(module).__name__ == "GroupViTAssignAttention":
                module.training = False
        return self

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).pooler_output)


class _ChameleonVq(nn.Module):
    """Chameleon's image tokenizer encoder (Meta's early-fusion model reads images as the codes
    of a VQ-GAN) with a classifier: a 3x3 convolution; stages of residual blocks (GroupNorm of
    32 groups, SiLU, a 3x3 convolution, twice, the input added back, through a 1x1 convolution
    where the channels change), a self-attention block after each residual block of a stage
    at a resolution it lists (GroupNorm, 1x1 convolutions for the queries, keys and values, one
    head over all positions, a 1x1 output projection, added back), a stride-2 convolution
    between stages; a middle of residual block, attention, residual block; a GroupNorm, SiLU
    and a 3x3 convolution to the latent channels, then quant_conv, the 1x1 convolution into
    the codebook's space. Its vector quantizer (the nearest code) is left out: the latents'
    spatial mean and a Linear. Here 16x16 images, 32 then 64 channels, two residual blocks a
    stage, attention at 8x8 (the second stage and the middle)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import ChameleonVQVAE, ChameleonVQVAEConfig

        _hf_quiet()
        cfg = ChameleonVQVAEConfig(
            embed_dim=32, num_embeddings=64, latent_channels=32, resolution=IMAGE,
            base_channels=32, channel_multiplier=[1, 2], num_res_blocks=2, attn_resolutions=[8],
        )  # fmt: skip
        vq = ChameleonVQVAE(cfg)  # its own initialization; the unused quantizer is dropped
        self.encoder, self.quant_conv = vq.encoder, vq.quant_conv
        self.head = nn.Linear(32, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.quant_conv(self.encoder(images)).mean((2, 3)))


class _GraniteSpeech(nn.Module):
    """Granite Speech's CTC encoder (IBM's; the name is all it shares with Granite 4's hybrid LM
    above) with a classifier: each frame's features through a Linear (input_linear); Conformer
    blocks: two half-step SiLU feed-forwards (Macaron) around a self-attention and a
    convolution module, a LayerNorm in front of each and one at the block's end. The attention
    runs within fixed blocks of frames (context_size), its scores plus Shaw's relative
    positions (a learned embedding of each clamped distance, read by the queries); bias-free
    queries, keys and values fused in one Linear (to_kv); the convolution module is a
    pointwise GLU, a depthwise convolution, BatchNorm, SiLU and a pointwise convolution.
    Halfway up the stack the CTC head's softmax is projected back and added in (out, out_mid:
    self-conditioned CTC). Mean pooling and a Linear. Here blocks of 8 frames, a 5-wide
    depthwise convolution, 16 CTC classes. BatchNorm in the convolution modules."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import GraniteSpeechCTCEncoder, GraniteSpeechEncoderConfig

        _hf_quiet()
        cfg = GraniteSpeechEncoderConfig(
            input_dim=MELS, num_layers=2, hidden_dim=64, feedforward_mult=2, num_heads=4,
            dim_head=16, output_dim=16, context_size=8, max_pos_emb=16, dropout=0.0,
            conv_kernel_size=5, conv_expansion_factor=2,
        )  # fmt: skip
        self.encoder = GraniteSpeechCTCEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        # (batch, 1, frames, bins): the frames as a BatchNorm net's healthy reruns pass them.
        return self.head(self.encoder(maps[:, 0]).last_hidden_state.mean(1))


def _mpt() -> nn.Module:
    from transformers import MptConfig, MptForCausalLM

    _hf_quiet()
    # MPT (MosaicML's Pretrained Transformer): a pre-norm causal LM with no positions in its
    # embeddings at all, ALiBi instead (each head's scores plus a fixed linear penalty on the
    # distance, its own slope per head); no biases anywhere (LayerNorms without one too), the
    # queries, keys and values from one fused Linear (Wqkv), a GELU MLP of up_proj and
    # down_proj (expansion_ratio times the width), a final LayerNorm and an output head tied to
    # the token embeddings.
    cfg = MptConfig(
        vocab_size=VOCAB, d_model=64, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=SEQ,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return MptForCausalLM(cfg)


def _xglm() -> nn.Module:
    from transformers import XGLMConfig, XGLMForCausalLM

    _hf_quiet()
    # XGLM (Meta's multilingual generative LM, a fairseq decoder): token embeddings scaled by
    # the root of the width plus fixed sinusoidal positions (offset by two, fairseq's), pre-norm
    # LayerNorm layers (attention with separate biased q, k, v and out projections; a GELU MLP
    # of fc1 and fc2), a final LayerNorm and an output head tied to the token embeddings.
    cfg = XGLMConfig(
        vocab_size=VOCAB, d_model=64, ffn_dim=128, num_layers=2, attention_heads=4,
        max_position_embeddings=SEQ, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        layerdrop=0.0, use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return XGLMForCausalLM(cfg)


class _ClvpText(nn.Module):
    """CLVP's text encoder (the Contrastive Language-Voice Pretrained model Tortoise TTS ranks
    its candidate speech with) as a masked LM: token embeddings, no absolute positions; pre-norm
    RMSNorm layers whose attention (bias-free q, k, v projections) turns the queries and keys
    by rotary positions (over 32 of each head's dimensions, or half the head if larger: the
    whole of a 32-wide head here), and whose MLP is a GELU gated linear unit (one Linear, fc1's
    proj, giving both halves, the GELU of one times the other) then fc2; a final LayerNorm.
    Its mean-pooled summary and the contrastive projection are left out (the projection an
    Identity): a Linear to the vocabulary on each token's final state."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import ClvpEncoderConfig
        from transformers.models.clvp.modeling_clvp import ClvpEncoder

        _hf_quiet()
        cfg = ClvpEncoderConfig(
            vocab_size=VOCAB, hidden_size=64, intermediate_size=128, projection_dim=64,
            num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=SEQ, dropout=0.0,
            attention_dropout=0.0, pad_token_id=0, bos_token_id=0, eos_token_id=0,
        )  # fmt: skip
        self.clvp = ClvpEncoder(cfg)
        self.clvp.projection = nn.Identity()
        self.head = nn.Linear(64, VOCAB)

    def forward(self, input_ids: torch.Tensor) -> _LmOutput:
        return _LmOutput(self.head(self.clvp(input_ids=input_ids).last_hidden_state))


class _InternVit(nn.Module):
    """InternVL's vision encoder (InternViT, Shanghai AI Lab's) with a classifier: a patch
    convolution, a class token, learned absolute positions; pre-norm layers (in the 6B model's
    form: RMS norms, and RMS norms on the queries and keys over all heads together, q_norm and
    k_norm, before they split) with bias-free q, k, v projections, a GELU MLP of fc1 and fc2,
    and layer scale: each branch's output times a learned per-channel vector (lambda_1,
    lambda_2, from 0.1) before it is added back. No final norm (its mean-pooling form): the
    mean of the last layer's tokens and a Linear. Here 16 patches (4x4 pixels each)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import InternVLVisionConfig, InternVLVisionModel

        _hf_quiet()
        cfg = InternVLVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=[IMAGE, IMAGE], patch_size=[4, 4], norm_type="rms_norm", use_qk_norm=True,
        )  # fmt: skip
        self.vision = InternVLVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).last_hidden_state.mean(1))


class _Phi4Audio(nn.Module):
    """Phi-4-multimodal's audio encoder (Microsoft's; the name is all it shares with the Phi
    LM above) with a classifier: a global mean-and-variance normalization of the features
    (fixed buffers, identity at initialization), NeMo's convolutional subsampling (a stride-2
    3x3 convolution, ReLU, a stride-2 depthwise 3x3 and a pointwise convolution, ReLU, then a
    Linear, embed.out, that makes each 4-frame step a token); Conformer blocks: two half-step
    feed-forwards (Macaron), each a LayerNorm, a SiLU gated MLP (gate and up projections one
    fused Linear, gate_up_proj) and down_proj, around a self-attention (LayerNorm, biased q, k,
    v and o projections) whose scores carry a learned relative-position bias shared by all
    blocks (one value per head and clamped distance, T5-like), and a convolution module
    (LayerNorm, a pointwise convolution with a SiLU GLU, a depthwise separable 5-wide
    convolution, SiLU, a pointwise convolution), a LayerNorm at the block's end. No streaming
    chunks (chunk_size -1: every token sees every other). Mean pooling and a Linear. No
    BatchNorm."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Phi4MultimodalAudioConfig, Phi4MultimodalAudioModel

        _hf_quiet()
        cfg = Phi4MultimodalAudioConfig(
            input_size=MELS, hidden_size=64, intermediate_size=128, num_attention_heads=4,
            num_blocks=2, nemo_conv_channels=16, time_reduction=4, kernel_size=5,
            depthwise_separable_out_channel=64, ext_pw_out_channel=64, chunk_size=-1,
            dropout_rate=0.0,
        )  # fmt: skip
        self.encoder = Phi4MultimodalAudioModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        # (batch, frames, bins), no padding mask: every clip fills its window.
        return self.head(self.encoder(frames, None).mean(1))


def _smollm3() -> nn.Module:
    from transformers import SmolLM3Config, SmolLM3ForCausalLM

    _hf_quiet()
    # SmolLM3 (Hugging Face's): a Llama-style causal LM (pre-norm RMS norms, GQA, a SwiGLU MLP, no
    # biases, a final RMS norm, an output head tied to the token embeddings) whose layers do not
    # all know positions: three in four rotate their queries and keys (rotary, theta 2e6), every
    # fourth has no positions at all (NoPE) and sees order only through the causal mask. Here
    # layer 0 rotates, layer 1 is NoPE (no_rope_layers [1, 0]).
    cfg = SmolLM3Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        no_rope_layers=[1, 0], use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return SmolLM3ForCausalLM(cfg)


def _nanochat() -> nn.Module:
    from transformers import NanoChatConfig, NanoChatForCausalLM

    _hf_quiet()
    # nanochat (Karpathy's): a causal LM whose RMS norms have no weight at all (pure
    # normalization, nothing learned), one of them on the token embeddings before the first
    # layer; GQA attention whose queries and keys are rotated (rotary, its halves' signs flipped)
    # and then RMS-normed per head (QK-norm after the positions, not before); an ungated MLP of
    # fc1, a squared ReLU and fc2; no biases; a final weightless norm and an untied output head
    # whose logits are soft-capped (15 tanh(x / 15)).
    cfg = NanoChatConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return NanoChatForCausalLM(cfg)


def _gte() -> nn.Module:
    from transformers import GteConfig, GteForMaskedLM

    _hf_quiet()
    # GTE (Alibaba's General Text Embeddings, the multilingual "new" encoder) as a masked LM: word
    # plus token-type embeddings and a LayerNorm, no absolute positions (rotary on the queries
    # and keys instead, theta 160000); post-norm layers (attention with biased q, k, v and o
    # projections, its LayerNorm after the residual; then a gated-GELU MLP, gate_proj and
    # up_proj without bias, down_proj with one, and its LayerNorm after the residual); BERT's
    # prediction head (dense, GELU, LayerNorm, a decoder tied to the word embeddings).
    cfg = GteConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pad_token_id=0,
    )  # fmt: skip
    return GteForMaskedLM(cfg)


class _BlipVision(nn.Module):
    """BLIP's vision encoder (Salesforce's Bootstrapping Language-Image Pre-training ViT) with a
    classifier: a patch convolution, a class token, learned absolute positions; pre-norm
    LayerNorm layers whose queries, keys and values come from one fused biased Linear (qkv)
    and whose MLP is fc1, GELU, fc2; a final LayerNorm (post_layernorm), which its pooled
    output applies a second time to the class token's normed state: that pooled class token
    and a Linear. Its config's initializer range (1e-10, a placeholder for loading trained
    weights) is set to 0.02, as every other config's. Here 16 patches (4x4 pixels each)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import BlipVisionConfig, BlipVisionModel

        _hf_quiet()
        cfg = BlipVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=4, attention_dropout=0.0, initializer_range=0.02,
        )  # fmt: skip
        self.vision = BlipVisionModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).pooler_output)


class _FunAsr(nn.Module):
    """Fun-ASR-Nano's audio encoder (SenseVoice's SAN-M encoder, Alibaba's FunASR) with a
    classifier. Its front end stacks neighbouring frames (low frame rate: here five frames of
    16 bins, centred by repeating the first and last, every second frame, 16 stacked frames of
    80 values; FunASR stacks seven every sixth), which go in with no embedding: scaled by the
    root of the width plus fixed sinusoidal positions (counted from one). Pre-norm LayerNorm
    layers whose attention (biased q, k, v and o projections) has a memory block beside it
    (FSMN: a depthwise, bias-free 5-wide convolution over time on the values before they split
    into heads, plus those values, added to the attention's output); a ReLU MLP of fc1 and fc2.
    Layer 0 reads the 80-wide stacked frames and has no residual around its attention (its
    values, through the memory block, carry each frame on); the last layer ends in a
    LayerNorm. Mean pooling and a Linear. No BatchNorm."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import FunAsrNanoEncoderConfig
        from transformers.models.fun_asr_nano.modeling_fun_asr_nano import FunAsrNanoEncoder

        _hf_quiet()
        cfg = FunAsrNanoEncoderConfig(
            num_mel_bins=MELS, num_stacked_frames=5, hidden_size=64, intermediate_size=128,
            num_hidden_layers=2, num_attention_heads=4, num_timestamp_prediction_layers=0,
            fsmn_kernel_size=5, max_position_embeddings=FRAMES, hidden_dropout=0.0,
            attention_dropout=0.0,
        )  # fmt: skip
        self.encoder = FunAsrNanoEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        # (batch, frames, bins): FunASR's low-frame-rate stacking, five frames every second one.
        padded = torch.cat(
            [frames[:, :1], frames[:, :1], frames, frames[:, -1:], frames[:, -1:]], 1
        )
        stacked = padded.unfold(1, 5, 2).transpose(2, 3).flatten(2)
        mask = torch.ones(stacked.shape[:2], dtype=torch.long)
        return self.head(self.encoder(stacked, mask).last_hidden_state.mean(1))


def _minicpm3() -> nn.Module:
    from transformers import MiniCPM3Config, MiniCPM3ForCausalLM

    _hf_quiet()
    # MiniCPM3 (OpenBMB's): a causal LM with DeepSeek's multi-head latent attention (queries
    # through a low-rank latent: q_a_proj, an RMS norm, q_b_proj; keys and values through one
    # compressed latent, kv_a_proj_with_mqa, whose RMS-normed part kv_b_proj expands per head and
    # whose other part is one rotary key all heads share; rotary on 8 of each head's 16 query and
    # key dimensions, values 16 wide) and its muP-style scalings: token embeddings times 12
    # (scale_emb), each residual branch times scale_depth / sqrt(layers) (1.4 / sqrt(2) here, 1.4
    # / sqrt(62) in the 4B), the final state divided by width / dim_model_base before the output
    # head tied to the embeddings (8 here, 10 in the 4B: 2560 / 256); pre-norm RMS norms, a SwiGLU
    # MLP, no biases, weights drawn at its config's 0.1.
    cfg = MiniCPM3Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ,
        q_lora_rank=32, kv_lora_rank=32, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=16,
        dim_model_base=8, use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return MiniCPM3ForCausalLM(cfg)


def _mimo() -> nn.Module:
    from transformers import MiMoV2FlashConfig, MiMoV2FlashForCausalLM

    _hf_quiet()
    # MiMo-V2-Flash (Xiaomi's): a causal LM whose first layer is full attention with a dense SwiGLU
    # MLP and whose later ones mostly attend within a sliding window (here layer 1, each token
    # seeing itself and the 7 before it; 128 before it in the release): those have twice the
    # key/value heads and a learned attention sink per head (an extra softmax logit that attends to
    # nothing). Query and key heads are wider than value heads (24 and 16 here, 192 and 128 in the
    # release), the values scaled by 0.707 (attention_value_scale), rotary on a third of each head
    # (theta 5e6 on full layers, 1e4 on windowed ones), GQA; after the first layer, a mixture of
    # experts without a shared expert (sigmoid router scores, a correction bias for the choice, top
    # 2 of 4 experts here, their weights renormalized; gate and up projections fused in one
    # (experts, out, in) tensor). Pre-norm RMS norms, no biases, an untied output head.
    cfg = MiMoV2FlashConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=1, head_dim=24, v_head_dim=16,
        moe_intermediate_size=32, n_routed_experts=4, num_experts_per_tok=2, sliding_window=8,
        max_position_embeddings=SEQ, use_cache=False, pad_token_id=0, bos_token_id=0,
        eos_token_id=0,
    )  # fmt: skip
    return MiMoV2FlashForCausalLM(cfg)


class _VitsText(nn.Module):
    """VITS's text encoder (Kim et al.'s end-to-end TTS, as in Meta's MMS-TTS) as a masked LM:
    token embeddings times the root of the width, no absolute positions; post-norm layers whose
    attention (biased q, k, v and out projections) adds relative-position terms within a window
    of 4 tokens either side, learned embeddings shared by the heads on the keys' side (added to
    the scores) and on the values' side (added to the output); a feed-forward of two 3-wide
    convolutions over time (conv_1, ReLU, conv_2), each input masked by the padding mask (all
    ones here); its LayerNorms after each residual add. The prior projection (project, a 1x1
    convolution to the flow's means and log-variances) is left unused: a Linear to the
    vocabulary on each token's final state. The text encoder is a plain module (no
    PreTrainedModel init): torch's defaults, but for its token embeddings, drawn as the
    original VITS draws them (N(0, 1 / width), unit size once scaled), with no padding row (the
    original's has none). LayerDrop off."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import VitsConfig
        from transformers.models.vits.modeling_vits import VitsTextEncoder

        _hf_quiet()
        cfg = VitsConfig(
            vocab_size=VOCAB, hidden_size=48, num_hidden_layers=2, num_attention_heads=2,
            window_size=4, ffn_dim=96, ffn_kernel_size=3, flow_size=16, layerdrop=0.0,
            hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        )  # fmt: skip
        self.text = VitsTextEncoder(cfg)
        nn.init.normal_(self.text.embed_tokens.weight, 0.0, 48**-0.5)
        self.head = nn.Linear(48, VOCAB)

    def forward(self, input_ids: torch.Tensor) -> _LmOutput:
        padding = torch.ones(*input_ids.shape, 1)  # every sequence fills its window
        return _LmOutput(self.head(self.text(input_ids, padding).last_hidden_state))


class _MllamaVision(nn.Module):
    """Llama 3.2 Vision's image encoder (Mllama's) with a classifier. It reads an image as tiles:
    here each 16x16 image as four 8x8 tiles (2 by 2, the one supported aspect ratio, id 1), each
    tile a bias-free patch convolution (4x4 patches) plus a class token; embeddings of the aspect
    ratio's tiles added before and after the first encoder, each through a tanh gate from 0, learned
    positions within a tile mixed with per-tile ones by another (from 0: positions only at first); a
    LayerNorm, each tile's tokens padded to a multiple of 8 (5 to 8), then two encoders over all
    tiles' tokens at once: a local one (pre-norm LayerNorm layers, bias-free q, k, v and o
    projections, a GELU MLP of fc1 and fc2; 2 layers here, 32 in the 11B), a LayerNorm, and a global
    one whose layers scale their attention and MLP outputs by tanh gates (drawn near 0; 1 layer
    here, 8 in the 11B). Its output per token is the global encoder's state beside a chosen local
    layer's (layer 0 here; layers 3, 7, 15, 23, 30 in the 11B): the tiles' class tokens of that,
    averaged, and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import MllamaVisionConfig, MllamaVisionModel

        _hf_quiet()
        cfg = MllamaVisionConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_global_layers=1,
            attention_heads=4, image_size=IMAGE // 2, patch_size=4, max_num_tiles=4,
            supported_aspect_ratios=[[2, 2]], intermediate_layers_indices=[0],
            vision_output_dim=128,
        )  # fmt: skip
        self.vision = MllamaVisionModel(cfg)
        self.head = nn.Linear(128, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        # (batch, channels, 16, 16) -> (batch, one image, 4 tiles row by row, channels, 8, 8).
        n, half = images.shape[0], IMAGE // 2
        tiles = images.unflatten(2, (2, half)).unflatten(4, (2, half)).permute(0, 2, 4, 1, 3, 5)
        tiles = tiles.reshape(n, 1, 4, 3, half, half)
        ratio = torch.ones(n, 1, dtype=torch.long)
        mask = torch.ones(n, 1, 4, dtype=torch.long)
        out = self.vision(tiles, ratio, mask).last_hidden_state  # (n, 1, tiles, tokens, 128)
        return self.head(out[:, 0, :, 0].mean(1))


class _Lilt(nn.Module):
    """LiLT (the Language-independent Layout Transformer, SCUT and Alibaba's) as a masked LM over
    text laid out on a page: two streams side by side, the text one RoBERTa's (word, token-type
    and learned position embeddings, a LayerNorm; post-norm layers, biased projections, a GELU
    MLP four times the width) and a layout one a quarter of its width (each token's box: its
    x0, y0, x1, y1, height and width embedded, a Linear, position embeddings, a LayerNorm; layers
    of the same shape); in each layer's attention the two streams add each other's scaled
    scores before their softmaxes (BiACM), each then weighing its own values. Here every
    sequence is one page of 4 lines of 8 tokens, token t's box (8 * (t % 8), 16 * (t // 8)) to
    6 and 10 past that on a 64-wide grid (1024 in the release), the same for every sequence.
    Its padding index is 0 (BERT's: these chains draw it, its embedding row stays zero): the
    positions are given in full (1 to 32, counted past that index as RoBERTa counts them), so
    that no token shifts them. No pooler: a Linear to the vocabulary on each token's final text
    state, as LiLT's own heads read the text stream only (of the layout stream's last layer, only
    its queries and keys, through the shared scores, reach it)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import LiltConfig, LiltModel

        _hf_quiet()
        cfg = LiltConfig(
            vocab_size=VOCAB, hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=192, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            max_position_embeddings=SEQ + 1, max_2d_position_embeddings=64,
        )  # fmt: skip
        self.lilt = LiltModel(cfg, add_pooling_layer=False)
        self.head = nn.Linear(48, VOCAB)
        t = torch.arange(SEQ)
        col, row = 8 * (t % 8), 16 * (t // 8)
        self.register_buffer("bbox", torch.stack([col, row, col + 6, row + 10], -1), False)
        self.register_buffer("positions", torch.arange(1, SEQ + 1), False)

    def forward(self, input_ids: torch.Tensor) -> _LmOutput:
        n = input_ids.shape[0]
        out = self.lilt(
            input_ids=input_ids, bbox=self.bbox.expand(n, -1, -1),
            position_ids=self.positions.expand(n, -1),
        )  # fmt: skip
        return _LmOutput(self.head(out.last_hidden_state))


def _zaya() -> nn.Module:
    from transformers import ZayaConfig, ZayaForCausalLM

    _hf_quiet()
    # ZAYA1 (Zyphra's): a causal LM whose attention is compressed convolutional attention (CCA):
    # queries (q_proj) and keys (k_proj, GQA) are mixed over time by two causal convolutions, a
    # depthwise one and a grouped one (one group per head), each 2 steps wide, plus residual paths
    # (each query averaged with its key head, each key the mean of its group's); half of each value
    # head comes from the current token (v_proj_current), half from the token before it
    # (v_proj_delayed); queries and keys L2-normed to the root of the head width, the keys then
    # times a learned temperature per key head (from 0: every token weighs its past evenly at
    # first); rotary on half of each head (theta 5e6). The residual stream is kept in float32 and
    # each residual add is a learned affine on both sides ((branch + b) * s + (residual + b') * s',
    # per channel; the embeddings get one too). Every layer is a mixture of experts: a router whose
    # state runs through the layers (down_proj to a 32-wide state here, plus the previous layer's
    # state times a learned scale, then an RMS norm and a two-layer GELU MLP) scores the experts and
    # a skip class that computes nothing (a -1 balancing bias on it), top 1 (of 4 here, 16 in the
    # release), SwiGLU experts with gate and up fused in one (experts, out, in) tensor. Pre-norm RMS
    # norms, no biases outside the router, a final RMS norm, an output head tied to the token
    # embeddings.
    cfg = ZayaConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, moe_intermediate_size=32, num_experts=4,
        num_experts_per_tok=1, router_hidden_size=32, max_position_embeddings=SEQ,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return ZayaForCausalLM(cfg)


def _dory() -> nn.Module:
    from transformers import DoryConfig, DoryForCausalLM

    _hf_quiet()
    # Dory (NVIDIA's Nemotron-Labs Dory): a normalized transformer (nGPT) with a looped middle.
    # Every hidden state lives on the unit sphere: its norms are L2 projections with no weight
    # (norm 1, not RMS 1), Gemma 2's four per layer, and each residual step is an interpolation
    # towards the normed branch output, h + a * (out - h), at a learned per-channel rate (a from
    # 0.05); queries and keys L2-normed per head, rotated (all of the head), the queries rescaled
    # per channel (sqk), the attention output gated by a sigmoid of gate_proj times a learned
    # scale and L2-normed before o_proj; a SwiGLU MLP whose gate and up outputs carry learned
    # per-channel scales (suv) and whose product is L2-normed before down_proj; no biases. Its
    # layers form an input section run once, a recurrent section run n times (each pass from the
    # normed state plus the normed input section's output) and an output section: here layer 0
    # (sliding, each token seeing itself and the 7 before it) is the input section and layer 1
    # (full attention) the recurrent one, run twice, with no output section. A final L2 norm, an
    # untied output head whose logits carry a learned scale per vocabulary entry.
    cfg = DoryConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=SEQ,
        sliding_window=8, layer_types=["sliding_attention", "full_attention"], n_input_layers=1,
        n_recurrent_layers=1, n_output_layers=0, n_recurrent_loops=2, use_cache=False,
        pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return DoryForCausalLM(cfg)


def _neomme() -> nn.Module:
    from transformers import NeoMMEConfig, NeoMMEForMaskedLM

    _hf_quiet()
    # NeoMME (H company's multimodal retrieval encoder), its text side as a masked LM: factorized
    # token embeddings (a 32-wide table, then a bias-free Linear to the width), a weightless RMS
    # norm, then pre-norm layers (weightless RMS norms) whose attention reads a learned mix of the
    # state and that first state (lambdas, from 1 and 0) and whose two residual branches are scaled
    # by 1 / sqrt(2 * layers) (0.5 here); bidirectional GQA attention whose queries and keys are
    # RMS-normed per head (no weight) and then rotated (M-RoPE over two axes, both the token's index
    # for text), with a value embedding (a second token table, from 0) added to the values in the
    # first and last global layers, exclusive self-attention (each head's output less its projection
    # on its own token's value, times tanh of a learned per-head alpha, from 0) and a sigmoid output
    # gate read from the layer's normed input (gate_proj) before o_proj; an ungated MLP of up_proj,
    # a squared ReLU and down_proj; o_proj and down_proj drawn at 0. Sliding layers attend within a
    # window (here layer 0, each token seeing 4 either side; 256 and 1024 by turns in the release),
    # the last layer and every sixth globally (here layer 1, with the value embedding). A final
    # weightless norm; the decoder reuses both embedding factors (the projection transposed, then
    # the 32-wide table). Its patch stem (for images) goes unused: patches of 2x2 keep it small.
    cfg = NeoMMEConfig(
        vocab_size=VOCAB, embedding_rank=32, hidden_size=64, intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        max_position_embeddings=SEQ, sliding_window=4, patch_size=2, pad_token_id=0,
    )  # fmt: skip
    return NeoMMEForMaskedLM(cfg)


class _Sam3Vit(nn.Module):
    """SAM 3's image encoder (Meta's Segment Anything 3 ViT, from Perception Encoder) with a
    classifier: a bias-free patch convolution (2x2 pixels here, 14x14 in the release), learned
    absolute positions for the pretraining grid tiled over the image's (here a 4x4 table over
    8x8 patches, as the release tiles its 24x24 one over 72x72), no class token; a LayerNorm in
    front of the layers, then pre-norm LayerNorm layers (biased q, k, v and o projections, a GELU
    MLP of fc1 and fc2) whose attention turns queries and keys by 2-d axial rotary positions
    (rows and columns, over the whole head) and runs within 4x4 windows of patches (24x24 in the
    release), but in the global layers (layer 1 here; 7, 15, 23 and 31 of 32 in the release),
    whose positions are scaled down by window / grid so both kinds count in a window's units. No
    final norm: the mean of the patches' last states and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Sam3ViTConfig, Sam3ViTModel

        _hf_quiet()
        cfg = Sam3ViTConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            image_size=IMAGE, patch_size=2, window_size=4, global_attn_indexes=[1],
            pretrain_image_size=IMAGE // 2,
        )  # fmt: skip
        self.vision = Sam3ViTModel(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).last_hidden_state.mean(1))


class _VoxtralRealtime(nn.Module):
    """Voxtral Realtime's audio encoder (Mistral's streaming speech model, a causal Whisper) with
    a classifier: Whisper's stem of two 3-wide convolutions over the log-mel frames, each GELU'd,
    the second of stride 2, both causal (padded on the left only); no absolute positions: rotary
    on the queries and keys (theta 1e4); pre-norm RMS-norm layers whose attention (q, v and o
    projections biased, k bias-free, as Whisper's) is causal and windowed (each frame seeing
    itself and the 7 before it here, 750 frames in the release), and whose MLP is SwiGLU (gate
    and up bias-free, down biased); a final RMS norm. Mean pooling over the 16 frames and a
    Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import VoxtralRealtimeEncoderConfig
        from transformers.models.voxtral_realtime.modeling_voxtral_realtime import (
            VoxtralRealtimeEncoder,
        )

        _hf_quiet()
        cfg = VoxtralRealtimeEncoderConfig(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            head_dim=16, num_mel_bins=MELS, max_position_embeddings=FRAMES, sliding_window=8,
            use_cache=False,
        )  # fmt: skip
        self.encoder = VoxtralRealtimeEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, mels: torch.Tensor) -> torch.Tensor:
        # (batch, bins, frames), as Whisper reads them.
        return self.head(self.encoder(mels).last_hidden_state.mean(1))


def _laguna() -> nn.Module:
    from transformers import LagunaConfig, LagunaForCausalLM

    _hf_quiet()
    # Laguna (Poolside's): a causal mixture-of-experts LM whose attention output is gated per head
    # by a softplus of g_proj (read from the layer's normed input, one gate per head broadcast over
    # its width) before o_proj; GQA with queries and keys RMS-normed per head, then rotated (half of
    # each head at theta 5e5 in global layers, all of it at theta 1e4 in sliding ones); the query
    # head count set per layer (4 in layer 0 and 8 in layer 1 here, both over 2 key-value heads).
    # Layer 0 attends within a sliding window of 8 tokens (512 in the release), layer 1 globally.
    # Layer 0's MLP is dense SwiGLU, every later one a sparse MoE: a sigmoid router (no softmax; a
    # score-correction bias, from 0 and not trained, shifts the selection only) picks the top 2 of
    # 4 experts (8 of 256 in the release), their weights renormalized to sum 1, SwiGLU experts with
    # gate and up fused in one (experts, out, in) tensor, plus an always-on shared SwiGLU expert.
    # Pre-norm RMS norms, no biases, a final RMS norm, an untied output head.
    cfg = LagunaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, moe_intermediate_size=32,
        shared_expert_intermediate_size=32, num_experts=4, num_experts_per_tok=2,
        max_position_embeddings=SEQ, sliding_window=8,
        layer_types=["sliding_attention", "full_attention"], num_attention_heads_per_layer=[4, 8],
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return LagunaForCausalLM(cfg)


def _esmc() -> nn.Module:
    from transformers import EsmcConfig, EsmcForMaskedLM

    _hf_quiet()
    # ESM C (EvolutionaryScale's ESM Cambrian protein language model) as a masked LM: token
    # embeddings without positions, pre-norm LayerNorm layers whose bidirectional attention (no
    # biases) LayerNorms its queries and keys over the whole projection width (bias-free, not per
    # head) and then rotates them (all of each head, theta 1e4), a SwiGLU MLP, and each residual
    # branch divided by sqrt(layers / 36) (ESM3's scaling: /1.49 at the release's 80 layers, so
    # x4.24 at these 2); a bias-free final LayerNorm; the head a dense layer, GELU, LayerNorm and
    # a biased decoder, untied from the embeddings (64 tokens in the release, the chain's 128 here).
    cfg = EsmcConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=SEQ, classifier_dropout=0.0,
    )  # fmt: skip
    return EsmcForMaskedLM(cfg)


def _inkling() -> nn.Module:
    from transformers import InklingForCausalLM
    from transformers.models.inkling.configuration_inkling import InklingTextConfig

    _hf_quiet()
    # Inkling (Thinking Machines'), its text model: a causal mixture-of-experts LM with no rotary
    # or absolute positions at all. Each head's attention logits get a position bias conditioned on
    # the hidden state: r_proj reads a small relative state per head (4 wide here, 16 in the
    # release) that mixes a learned bank of bias-against-distance profiles (rel_logits_proj) into
    # one bias per backward distance, zero beyond its extent (the window in sliding layers, 32 here
    # and 1024 in the release in global ones). Keys and values each pass through a causal depthwise
    # convolution 4 steps wide with a residual (k_sconv, v_sconv, kept in float32), queries and keys
    # are RMS-normed per head and scaled by 1/d, not 1/sqrt(d); GQA. The attention output and the
    # MLP output pass through two more such short convolutions (attn_sconv, mlp_sconv) before their
    # residual adds. Every MLP is a mixture of experts: a float32 sigmoid router scores the routed
    # experts and 2 shared ones alike, picks the top 2 of 4 routed ones (6 of 256 in the release)
    # by score plus a correction bias (a buffer at 0), and one softmax over the log-sigmoids of the
    # chosen and the shared experts' logits weighs them all, times 8 and a learned global scale;
    # SwiGLU experts with gate and up fused in one (experts, out, in) tensor. Layer 0 attends within
    # a window of 8 tokens (512 in the release, whose global layers are every sixth), layer 1
    # globally. The token embeddings are RMS-normed as they are read (a norm inside the embedding);
    # pre-norm RMS norms, no biases, a final RMS norm, the final state divided by a muP width
    # multiplier (24 in the release, 96 times as wide; 1 here) before an untied output head.
    cfg = InklingTextConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, swa_num_attention_heads=4, swa_num_key_value_heads=2,
        swa_head_dim=16, sliding_window_size=8, d_rel=4, rel_extent=SEQ,
        layer_types=["hybrid_sliding", "hybrid"], intermediate_size=128, moe_intermediate_size=32,
        n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=2,
        logits_mup_width_multiplier=1.0, max_position_embeddings=SEQ, pad_token_id=0,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return InklingForCausalLM(cfg)


class _Sapiens2Vit(nn.Module):
    """Sapiens 2's backbone (Meta's human-centric ViT) with a classifier: a biased patch
    convolution (2x2 pixels here, 16x16 in the release), a class token and register tokens (2
    here, 8 in the release), no position embedding: 2-d rotary positions (theta 100) over the
    patch centres' coordinates in [-1, 1], on the patch tokens' queries and keys only, without
    the training-time rescaling of those coordinates. Pre-norm RMS-norm layers whose attention has
    biased q, k, v and o projections and RMS-normed queries and keys per head, and is full
    multi-head in layer 0 (as the release's first and last eight layers) but grouped-query in
    layer 1 (2 key-value heads for 4, as its middle layers); LayerScale on the attention branch
    only; a biased SwiGLU MLP. A final RMS norm; a Linear on the class token."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Sapiens2Config, Sapiens2Model

        _hf_quiet()
        cfg = Sapiens2Config(
            patch_size=2, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, image_size=IMAGE, num_register_tokens=2, pos_embed_shift=None,
            pos_embed_jitter=None, pos_embed_rescale=None, num_first_full_attention_layers=1,
            num_last_full_attention_layers=0, num_key_value_attention_heads=2,
        )  # fmt: skip
        self.vision = Sapiens2Model(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.vision(images).pooler_output)


class _NemotronAsrStreaming(nn.Module):
    """Nemotron Speech Streaming's encoder (NVIDIA's cache-aware streaming FastConformer) with a
    classifier: log-mel frames through a causal subsampling (a stride-2 3x3 convolution whose
    padding, 2 frames before and 1 after, lets no output read a later frame, ReLU, a stride-2
    causal depthwise 3x3 and a pointwise convolution, ReLU, then a Linear that makes each
    4-frame step a token; 8x in three stages in the release), times sqrt(width); Conformer
    layers: two half-step SiLU feed-forwards (Macaron) around a self-attention with
    Transformer-XL relative positions (sinusoidal distances projected by relative_k_proj,
    content and position biases per head) that attends in chunks (each token sees its own chunk
    of 2 and the 2 chunks before it; chunks of 14 and 70 frames of left context in the release)
    and a convolution module (pointwise GLU, causal depthwise 9-wide convolution, LayerNorm
    where Parakeet has BatchNorm, SiLU, pointwise), biases on every projection but
    relative_k_proj, LayerNorms in front of each and at the end of every layer; mean pooling and
    a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import NemotronAsrStreamingEncoder, NemotronAsrStreamingEncoderConfig

        _hf_quiet()
        cfg = NemotronAsrStreamingEncoderConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            conv_kernel_size=9, subsampling_factor=4, subsampling_conv_channels=16,
            num_mel_bins=MELS, dropout=0.0, dropout_positions=0.0, layerdrop=0.0,
            activation_dropout=0.0, attention_dropout=0.0, max_position_embeddings=FRAMES,
            sliding_window=5, default_num_lookahead_tokens=1,
        )  # fmt: skip
        self.encoder = NemotronAsrStreamingEncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        # (batch, frames, bins): the 32 frames make 9 tokens (causal padding), in chunks of 2.
        out = self.encoder(input_features=frames, num_lookahead_tokens=1)
        return self.head(out.last_hidden_state.mean(1))


def _ergo() -> nn.Module:
    from transformers import ErgoConfig, ErgoForCausalLM

    _hf_quiet()
    # Ergo: a causal mixture-of-experts LM whose every residual add is a learned gate per hidden
    # dimension (the branch weighed by sigmoid(w), the stream by sqrt(1 + sigmoid(w)) times
    # exp(-softplus(w) / 2), w from 0), each branch's output RMS-normed before it (a sandwich
    # norm). Attention reads q, k and v from one fused qkv_proj, RMS-norms queries and keys per
    # head, GQA; layer 0 attends within a sliding window of 8 tokens (512 in the release) under
    # rotary positions, layer 1 (every fourth in the release) globally with no positions at all.
    # Every MLP is squared-ReLU, without a gate: layer 0's dense, layer 1's a mixture of experts
    # whose float32 sigmoid router (a score-correction bias at 0 shifts the selection only) picks
    # the top 2 of 4 experts (8 of 256 in the release), their weights renormalized and times
    # sqrt(8); each expert's (in, out)-stacked up and down projections are followed by an RMS
    # norm of the expert's own, and an always-on shared expert, RMS-normed too, is added. No
    # biases; a float32 embedding table, a final RMS norm, an untied float32-output head.
    cfg = ErgoConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, first_dense_intermediate_size=128, num_dense_blocks=1,
        moe_intermediate_size=32, shared_intermediate_size=32, num_experts=4,
        num_experts_per_tok=2, max_position_embeddings=SEQ, sliding_window=8,
        layer_types=["sliding_attention", "full_attention"], rms_norm_eps=1e-6,
        use_cache=False, pad_token_id=0, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return ErgoForCausalLM(cfg)


def _ultrabert() -> nn.Module:
    from transformers import UltrabertConfig, UltrabertForMaskedLM

    _hf_quiet()
    # UltraBERT as a masked LM: EuroBERT's Llama-style encoder (token embeddings without
    # positions, pre-norm RMS-norm layers, bidirectional GQA under rotary positions, a SwiGLU MLP,
    # no biases, a final RMS norm) with a window per layer: layer 0 attends within 4 tokens either
    # side (128 in the release), layer 1 globally. The head is two bias-free projections, each
    # followed by tanh-GELU (64 wide here, 768 in the release), then the decoder, tied to the
    # token embeddings.
    cfg = UltrabertConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        sliding_window=4, layer_types=["sliding_attention", "full_attention"],
        prediction_head_size=64, tie_word_embeddings=True, pad_token_id=0, bos_token_id=0,
        eos_token_id=0,
    )  # fmt: skip
    return UltrabertForMaskedLM(cfg)


def _pvt_v2() -> nn.Module:
    from transformers import PvtV2Config, PvtV2ForImageClassification

    _hf_quiet()
    # PVTv2-Li (Pyramid Vision Transformer v2, its linear-complexity variant): overlapping patch
    # embeddings (a strided 3x3 convolution and a LayerNorm per stage; 7x7 at stride 4 in the
    # release's first) and no position embeddings at all. Attention's keys and values read the
    # map average-pooled to a fixed 7x7 grid, a 1x1 convolution, a LayerNorm and GELU, the
    # queries the full map (8x8 in stage 0, 4x4 in stage 1 here). Each MLP is a Linear, a ReLU,
    # a depthwise 3x3 convolution (the only positional cue), GELU and a Linear. Pre-norm LayerNorm
    # blocks, a LayerNorm after each stage, mean pooling and a Linear.
    cfg = PvtV2Config(
        image_size=IMAGE, num_channels=3, num_encoder_blocks=2, depths=[2, 2], sr_ratios=[1, 1],
        hidden_sizes=[32, 64], patch_sizes=[3, 3], strides=[2, 2], num_attention_heads=[1, 2],
        mlp_ratios=[2, 2], linear_attention=True, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, drop_path_rate=0.0, num_labels=CLASSES,
    )  # fmt: skip
    return PvtV2ForImageClassification(cfg)


class _Dinov3ConvNext(nn.Module):
    """DINOv3's ConvNeXt backbone (Meta's, distilled from the DINOv3 ViT) with a classifier: a
    4x4 stride-4 stem convolution and a channels-first LayerNorm, a LayerNorm and a 2x2 stride-2
    convolution between stages; blocks of a depthwise 7x7 convolution, a LayerNorm, a pointwise
    MLP (two Linears, 4x wide, GELU) and a per-channel layer scale from 1e-6; no BatchNorm.
    Global average pooling, then a final LayerNorm (over the pooled vector set beside the map's
    positions, as a ViT's class token), a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import DINOv3ConvNextConfig, DINOv3ConvNextModel

        _hf_quiet()
        cfg = DINOv3ConvNextConfig(
            num_channels=3, hidden_sizes=[16, 32], depths=[2, 2], image_size=IMAGE,
            drop_path_rate=0.0,
        )  # fmt: skip
        self.convnext = DINOv3ConvNextModel(cfg)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.convnext(images).pooler_output)


class _Qwen3AsrEncoder(nn.Module):
    """Qwen3-ASR's audio encoder (Alibaba's, Whisper-like) with a classifier: the log-mel frames
    cut into chunks of 100 (the clip's 32 frames zero-padded to one chunk, a mask marking them),
    each chunk read alone by three stride-2 3x3 convolutions over time and frequency with GELU
    and a bias-free Linear (the clip's 32 frames make 4 tokens, a full chunk 13), then sinusoidal
    positions that restart at every chunk; pre-norm LayerNorm layers (biased q, k, v and out
    projections, a GELU MLP) whose attention stays within one clip's valid tokens and windows of
    8 chunks, packed by cumulative lengths; a final LayerNorm; mean pooling and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import Qwen3ASREncoder, Qwen3ASREncoderConfig

        _hf_quiet()
        cfg = Qwen3ASREncoderConfig(
            num_mel_bins=MELS, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
            d_model=64, n_window=50, n_window_infer=800, downsample_hidden_size=16,
            max_position_embeddings=13, output_dim=64,
        )  # fmt: skip
        self.encoder = Qwen3ASREncoder(cfg)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, mels: torch.Tensor) -> torch.Tensor:
        # (batch, bins, frames), padded to a chunk; the encoder packs every clip's valid tokens
        # into one sequence, 4 a clip.
        n, frames = mels.shape[0], mels.shape[2]
        padded = nn.functional.pad(mels, (0, 100 - frames))
        mask = (torch.arange(100) < frames).long().expand(n, 100)
        out = self.encoder(input_features=padded, input_features_mask=mask).last_hidden_state
        return self.head(out.view(n, -1, out.shape[-1]).mean(1))


def _starcoder2() -> nn.Module:
    from transformers import Starcoder2Config, Starcoder2ForCausalLM

    _hf_quiet()
    # StarCoder2 (BigCode's): a causal LM of pre-norm LayerNorm layers (with biases), GQA under
    # rotary positions within a sliding window of 8 tokens (4096 in the release), biases on
    # every projection (q, k, v, o, c_fc, c_proj), a tanh-GELU MLP without a gate (c_fc, c_proj,
    # as GPT-2's names), a final LayerNorm, the output head tied to the token embeddings.
    cfg = Starcoder2Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
        sliding_window=8, use_bias=True, residual_dropout=0.0, embedding_dropout=0.0,
        attention_dropout=0.0, use_cache=False, bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return Starcoder2ForCausalLM(cfg)


def _distilbert() -> nn.Module:
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    _hf_quiet()
    # DistilBERT as a masked LM: BERT's post-norm LayerNorm encoder with learned absolute
    # positions but no token-type embeddings and no pooler, its attention's projections named
    # q_lin, k_lin, v_lin and out_lin, a GELU MLP (lin1, lin2), each sublayer's LayerNorm after
    # its residual add (sa_layer_norm, output_layer_norm); the head a Linear, GELU, a LayerNorm
    # and the decoder (vocab_projector), tied to the token embeddings.
    cfg = DistilBertConfig(
        vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
        max_position_embeddings=SEQ, dropout=0.0, attention_dropout=0.0, pad_token_id=0,
    )  # fmt: skip
    return DistilBertForMaskedLM(cfg)


def _ijepa() -> nn.Module:
    from transformers import IJepaConfig, IJepaForImageClassification

    _hf_quiet()
    # I-JEPA's ViT encoder with a classifier: ViT's pre-norm LayerNorm layers and GELU MLP over
    # 4x4 patches under learned absolute position embeddings, but no class token at all: the
    # head reads the mean of the final LayerNorm's patch tokens.
    cfg = IJepaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=IMAGE, patch_size=4, num_channels=3, num_labels=CLASSES,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return IJepaForImageClassification(cfg)


def _hubert() -> nn.Module:
    from transformers import HubertConfig, HubertForSequenceClassification

    _hf_quiet()
    # HuBERT in its Large layout (do_stable_layer_norm): Wav2Vec2's strided conv1d feature
    # encoder, here with a LayerNorm after every convolution, a feature projection, a grouped
    # convolutional position embedding (weight-normed), then pre-norm LayerNorm layers (where
    # Wav2Vec2's base is post-norm) and a final LayerNorm; mean pooling, a projection and a
    # Linear. SpecAugment and LayerDrop off: both draw randoms.
    cfg = HubertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), feat_extract_norm="layer",
        do_stable_layer_norm=True, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        classifier_proj_size=32, num_labels=CLASSES, hidden_dropout=0.0, activation_dropout=0.0,
        attention_dropout=0.0, feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0,
        apply_spec_augment=False,
    )  # fmt: skip
    return HubertForSequenceClassification(cfg)


def _biogpt() -> nn.Module:
    from transformers import BioGptConfig, BioGptForCausalLM

    _hf_quiet()
    # BioGPT (Microsoft's, fairseq's transformer_lm layout): token embeddings scaled by
    # sqrt(hidden), learned absolute positions offset by 2, pre-norm LayerNorm layers with biases
    # on every projection, a GELU MLP (fc1, fc2), a final LayerNorm, the output projection tied
    # to the token embeddings.
    cfg = BioGptConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=SEQ + 2, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, activation_dropout=0.0, layerdrop=0.0,
        use_cache=False, pad_token_id=1, bos_token_id=0, eos_token_id=2,
    )  # fmt: skip
    return BioGptForCausalLM(cfg)


class _LstmLayer(nn.Module):
    """An LSTM layer in torch.nn's equations, with the input-to-gates projection of every
    time step done at once (as cuDNN does) as its own Linear, so a fault can sit on it."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.ih = nn.Linear(width, 4 * width)
        self.hh = nn.Linear(width, 4 * width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gates_x = self.ih(x)
        h = c = torch.zeros(x.shape[0], x.shape[2], dtype=gates_x.dtype)
        out = []
        for t in range(x.shape[1]):
            i, f, g, o = (gates_x[:, t] + self.hh(h)).chunk(4, -1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            out.append(h)
        return torch.stack(out, 1)


class _LstmBlock(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.ln1, self.lstm = nn.LayerNorm(width), _LstmLayer(width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.lstm(self.ln1(x))
        return x + self.mlp(self.ln2(x))


@dataclass(frozen=True)
class _LmOutput:
    logits: torch.Tensor


class _LstmLm(nn.Module):
    """A recurrent language model: pre-norm residual blocks with an LSTM where a
    transformer has attention (no positions: the recurrence orders the tokens)."""

    def __init__(self, width: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.blocks = nn.ModuleList(_LstmBlock(width) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, VOCAB, bias=False)

    def forward(self, input_ids: torch.Tensor) -> _LmOutput:
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x)
        return _LmOutput(self.head(self.norm(x)))


class _GatedConvBlock(nn.Module):
    """A gated convolutional LM block (Dauphin et al. 2017): a causal dilated conv1d whose
    output is gated by its own second half (GLU) mixes the tokens, then an MLP; pre-norm."""

    def __init__(self, width: int, dilation: int) -> None:
        super().__init__()
        self.ln1, self.pad = nn.LayerNorm(width), 2 * dilation
        self.conv = nn.Conv1d(width, 2 * width, 3, dilation=dilation)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.pad(self.ln1(x).transpose(1, 2), (self.pad, 0))  # causal: left only
        x = x + nn.functional.glu(self.conv(h), dim=1).transpose(1, 2)
        return x + self.mlp(self.ln2(x))


class _GatedConvLm(nn.Module):
    """A convolutional language model: no attention and no recurrence, tokens mixed only by
    causal convolutions whose dilation doubles per layer (no positions: the kernels order them)."""

    def __init__(self, width: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.blocks = nn.ModuleList(_GatedConvBlock(width, 2**i) for i in range(layers))
        self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, VOCAB, bias=False)

    def forward(self, input_ids: torch.Tensor) -> _LmOutput:
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x)
        return _LmOutput(self.head(self.norm(x)))


class _DenseLayer(nn.Module):
    """DenseNet-BC's layer: BN-ReLU-1x1 conv (bottleneck), BN-ReLU-3x3 conv, and its `growth`
    new channels concatenated to everything before them (features reused, not summed)."""

    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, 2 * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(2 * growth)
        self.conv2 = nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(torch.relu(self.norm1(x)))
        return torch.cat([x, self.conv2(torch.relu(self.norm2(h)))], 1)


def _densenet() -> nn.Module:
    def stage(cin: int) -> nn.Sequential:
        return nn.Sequential(_DenseLayer(cin, 8), _DenseLayer(cin + 8, 8))

    # Two dense stages of two layers, a transition (BN-ReLU-1x1 conv halving the channels,
    # average pool) between them, a final BN-ReLU, global average pooling.
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), stage(16),
        nn.Sequential(nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 16, 1, bias=False),
                      nn.AvgPool2d(2)),
        stage(16), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(32, CLASSES),
    )  # fmt: skip


def _cnn() -> nn.Module:
    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    return nn.Sequential(
        block(3, 16), block(16, 32), nn.MaxPool2d(2), block(32, 32),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, CLASSES),
    )  # fmt: skip


def _tokens(seed: int) -> Iterator[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    # A sparse random transition table: each token has 4 likely successors.
    succ = torch.randint(0, VOCAB, (VOCAB, 4), generator=g)
    while True:
        seqs = torch.empty(BATCH, SEQ, dtype=torch.long)
        seqs[:, 0] = torch.randint(0, VOCAB, (BATCH,), generator=g)
        for t in range(1, SEQ):
            pick = torch.randint(0, 4, (BATCH,), generator=g)
            seqs[:, t] = succ[seqs[:, t - 1], pick]
        yield seqs


def _images(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(CLASSES, 3, IMAGE, IMAGE, generator=g)
    while True:
        labels = torch.randint(0, CLASSES, (BATCH * 2,), generator=g)
        yield protos[labels] + 0.8 * torch.randn(BATCH * 2, 3, IMAGE, IMAGE, generator=g), labels


def _clips(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    # Class prototypes are short videos: a random image drifting by its own step (rows and
    # columns, -2 to 2 pixels a frame, wrapping round), so a class is its look and its motion,
    # seen through noise. (batch, frames, channels, height, width), as TimeSformer reads them.
    protos = torch.randn(CLASSES, 3, IMAGE, IMAGE, generator=g)
    steps = torch.randint(-2, 3, (CLASSES, 2), generator=g).tolist()
    clips = torch.stack([
        torch.stack([p.roll((dy * t, dx * t), (1, 2)) for t in range(CLIP)])
        for p, (dy, dx) in zip(protos, steps, strict=True)
    ])  # fmt: skip
    while True:
        labels = torch.randint(0, CLASSES, (BATCH * 2,), generator=g)
        noise = torch.randn(BATCH * 2, CLIP, 3, IMAGE, IMAGE, generator=g)
        yield clips[labels] + 0.8 * noise, labels


def _waves(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    # Class prototypes are random mixtures of a few tones, heard through noise.
    t = torch.arange(WAVE) / WAVE
    freqs = torch.randint(2, 40, (CLASSES, 3), generator=g).float()
    phases = 6.28 * torch.rand(CLASSES, 3, generator=g)
    protos = torch.sin(6.28 * freqs[:, :, None] * t + phases[:, :, None]).sum(1)
    while True:
        labels = torch.randint(0, CLASSES, (BATCH * 2,), generator=g)
        yield protos[labels] + 0.8 * torch.randn(BATCH * 2, WAVE, generator=g), labels


def _mels(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    # Class prototypes are random log-mel patterns, heard through noise.
    protos = torch.randn(CLASSES, MELS, FRAMES, generator=g)
    while True:
        labels = torch.randint(0, CLASSES, (BATCH * 2,), generator=g)
        yield protos[labels] + 0.8 * torch.randn(BATCH * 2, MELS, FRAMES, generator=g), labels


def _mel_frames(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    # _mels' log-mel patterns, frames first: (batch, frames, bins), as Wav2Vec2-BERT reads them.
    for mels, labels in _mels(seed):
        yield mels.transpose(1, 2).contiguous(), labels


def _mel_maps(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    # _mel_frames as one-channel maps, (batch, 1, frames, bins): a BatchNorm net's healthy
    # reruns include channels-last ones, which need four dimensions.
    for frames, labels in _mel_frames(seed):
        yield frames[:, None], labels


def _spectra(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    # The waveforms of _waves, each heard as a log-magnitude spectrogram (32-sample Hann
    # frames, hop 16: 20 frames of 17 bins) beside a noise sequence (16 values a frame, drawn
    # from the family's own generator), packed side by side per frame; the target is the
    # waveform itself.
    g = torch.Generator().manual_seed(seed + 1)
    for waves, _ in _waves(seed):
        frames = nn.functional.pad(waves, (8, 8)).unfold(1, 2 * HOP, HOP)
        spec = torch.fft.rfft(frames * torch.hann_window(2 * HOP), dim=-1).abs()
        noise = torch.randn(waves.shape[0], WAVE // HOP, NOISE, generator=g)
        yield torch.cat([torch.log(spec + 1e-2), noise], -1), waves


def _series(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    # Each channel of each series is a mixture of two tones (drawn from a fixed set, at random
    # phases and levels) plus noise: its past says how it goes on.
    t = torch.arange(CONTEXT + HORIZON).float()
    freqs = 6.28 / torch.tensor([4.0, 6.0, 8.0, 12.0, 16.0])
    while True:
        pick = torch.randint(0, len(freqs), (BATCH * 2, SERIES, 2), generator=g)
        phase = 6.28 * torch.rand(BATCH * 2, SERIES, 2, 1, generator=g)
        level = torch.randn(BATCH * 2, SERIES, 1, generator=g)
        waves = torch.sin(freqs[pick][..., None] * t + phase).sum(2) + level
        waves = waves + 0.1 * torch.randn(waves.shape, generator=g)
        waves = waves.transpose(1, 2)  # (batch, time, channels)
        yield waves[:, :CONTEXT].contiguous(), waves[:, CONTEXT:].contiguous()


def _episodes(seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    # A fixed stable linear system (s' = A s + B a + noise) driven by an expert whose action is
    # tanh(K s + goal u) plus noise, each episode with its own goal in [-1, 1], which its reward
    # (goal times the action's reach along u, less a tenth of the state's energy) reveals;
    # packed per step as the state, the return to go (scaled by 1/10, as Decision Transformer
    # scales its returns) and the time step, the target being the actions.
    a_sys = 0.9 * torch.linalg.qr(torch.randn(STATE, STATE, generator=g))[0]
    b_sys = 0.5 * torch.randn(STATE, ACT, generator=g)
    gain = 0.3 * torch.randn(ACT, STATE, generator=g)
    u = torch.randn(ACT, generator=g)
    steps = torch.arange(EPISODE).float().expand(BATCH * 2, EPISODE)
    while True:
        goal = 2 * torch.rand(BATCH * 2, 1, generator=g) - 1
        s = torch.randn(BATCH * 2, STATE, generator=g)
        states, actions, rewards = [], [], []
        for _ in range(EPISODE):
            drive = s @ gain.T + goal * u + 0.2 * torch.randn(BATCH * 2, ACT, generator=g)
            a = torch.tanh(drive)
            states.append(s)
            actions.append(a)
            rewards.append(goal[:, 0] * (a @ u) / ACT - 0.1 * (s**2).mean(1))
            s = s @ a_sys.T + a @ b_sys.T + 0.1 * torch.randn(BATCH * 2, STATE, generator=g)
        togo = torch.stack(rewards, 1).flip(1).cumsum(1).flip(1) / EPISODE
        inputs = torch.cat([torch.stack(states, 1), togo[..., None], steps[..., None]], -1)
        yield inputs, torch.stack(actions, 1)


def _causal_loss(model: nn.Module, seqs: object, total: int) -> torch.Tensor:
    assert isinstance(seqs, torch.Tensor)
    logits = model(input_ids=seqs).logits[:, :-1]
    target = seqs[:, 1:]
    # Summed, then divided by the whole batch's count: every accumulation split computes the
    # same gradient up to round-off.
    return nn.functional.cross_entropy(
        logits.reshape(-1, VOCAB).float(), target.reshape(-1), reduction="sum"
    ) / (total * (SEQ - 1))


def _masked_loss(model: nn.Module, seqs: object, total: int) -> torch.Tensor:
    assert isinstance(seqs, torch.Tensor)
    # Positions 0, 7, 14, 21 and 28 of every sequence, so the same in every micro-batch split.
    # Five positions per sequence, the first a random start token, teach the model little in
    # 120 steps: masked-LM losses stay near chance (see docs/drift-statistics.md).
    masked = (torch.arange(SEQ) % 7 == 0).expand_as(seqs)
    inputs = seqs.masked_fill(masked, 1)
    logits = model(input_ids=inputs).logits
    return nn.functional.cross_entropy(logits[masked].float(), seqs[masked], reduction="sum") / (
        total * SEQ / 7
    )


def _seq2seq_loss(model: nn.Module, seqs: object, total: int) -> torch.Tensor:
    assert isinstance(seqs, torch.Tensor)
    # The encoder reads the first half of each chain, the decoder writes the second half.
    half = SEQ // 2
    source, target = seqs[:, :half], seqs[:, half:]
    start = torch.zeros_like(target[:, :1])
    logits = model(input_ids=source, decoder_input_ids=torch.cat([start, target[:, :-1]], 1)).logits
    return nn.functional.cross_entropy(
        logits.reshape(-1, VOCAB).float(), target.reshape(-1), reduction="sum"
    ) / (total * half)


def _class_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    inputs, labels = batch  # images or waveforms
    out = model(inputs)
    # PP-LCNet's classifier returns its logits as its last_hidden_state.
    logits = out if isinstance(out, torch.Tensor) else getattr(out, "logits", None)
    if logits is None:
        logits = out.last_hidden_state
    return nn.functional.cross_entropy(logits.float(), labels, reduction="sum") / total


def _forecast_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    past, future = batch
    forecast = model(past_values=past).prediction_outputs
    return nn.functional.mse_loss(forecast.float(), future, reduction="sum") / (
        total * HORIZON * SERIES
    )


def _prediction_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    past, future = batch
    # Autoformer's own loss: the forecast distribution's negative log-likelihood, averaged
    # over series and horizon; scaled back to the micro-batch's share of the whole batch. Its
    # one time feature is the step's position in the window.
    n, steps = past.shape[0], CONTEXT + HORIZON
    time = (torch.arange(steps, dtype=torch.float32) / steps).expand(n, steps)[..., None]
    out = model(
        past_values=past, past_time_features=time[:, :CONTEXT],
        past_observed_mask=torch.ones_like(past), future_values=future,
        future_time_features=time[:, CONTEXT:],
    )  # fmt: skip
    return out.loss * n / total


def _informer_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    # ProbSparse attention draws its key sample from torch's global generator on every call:
    # drawn from one fixed seed, every forward (micro-batch split, order or rerun) samples
    # the same keys, as dropout is off everywhere else.
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return _prediction_loss(model, batch, total)


def _timesfm_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    past, future = batch
    # TimesFM reads univariate series: every channel of every series is one. Its own loss
    # (the mean forecast's squared error plus the quantiles' pinball loss, both averaged),
    # scaled back to the micro-batch's share of the whole batch.
    n = past.shape[0]
    series = list(past.transpose(1, 2).reshape(n * SERIES, CONTEXT))
    target = future.transpose(1, 2).reshape(n * SERIES, HORIZON)
    out = model(past_values=series, future_values=target)
    return out.loss * n / total


def _vocoder_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    inputs, waves = batch
    spec, noise = inputs[..., :BINS], inputs[..., BINS:]
    out = model(input_features=spec, noise_sequence=noise).waveforms.float()

    def magnitude(w: torch.Tensor) -> torch.Tensor:
        window = torch.hann_window(64)
        return torch.stft(w, 64, 16, window=window, return_complex=True).abs()

    # A vocoder's reconstruction loss: the waveform's L1 plus the L1 of the log-magnitude
    # spectrograms (phase-blind), each averaged over its elements, summed over the micro-batch
    # and divided by the whole batch's count.
    spectral = torch.log(magnitude(out) + 1e-3) - torch.log(magnitude(waves) + 1e-3)
    per_wave = (out - waves).abs().sum() / WAVE + spectral.abs().sum() / spectral[0].numel()
    return per_wave / total


def _action_loss(model: nn.Module, batch: object, total: int) -> torch.Tensor:
    assert isinstance(batch, tuple)
    inputs, actions = batch
    states, togo, steps = inputs[..., :STATE], inputs[..., STATE : STATE + 1], inputs[..., -1]
    out = model(
        states=states, actions=actions, returns_to_go=togo, timesteps=steps.long(),
        attention_mask=torch.ones_like(steps, dtype=torch.long),
    )  # fmt: skip
    # The Decision Transformer's own loss, the predicted actions' squared error, summed over
    # the micro-batch and divided by the whole batch's count of action values.
    return nn.functional.mse_loss(out.action_preds.float(), actions, reduction="sum") / (
        total * EPISODE * ACT
    )


def _lm_sites(prefix: str, attn: str, mlp: str, embed: str, norm: str) -> dict[str, str]:
    return {
        "attention": f"{prefix}.0.{attn}",
        "mlp": f"{prefix}.1.{mlp}",
        "embedding": embed,
        "norm": f"{prefix}.1.{norm}",
    }


# ALBERT's one layer, which both of its layers are.
_ALBERT_LAYER = "albert.encoder.albert_layer_groups.0.albert_layers.0"
# PP-LCNetV3's depthwise reparameterization layers of stage 1's and stage 2's first blocks.
_V3_DW1 = "backbone.encoder.blocks.1.layers.0.depthwise_convolution"
_V3_DW2 = "backbone.encoder.blocks.2.layers.0.depthwise_convolution"

ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        Arch("gpt2", _gpt2, _tokens, _causal_loss,
             _lm_sites("transformer.h", "attn.c_attn", "mlp.c_fc", "transformer.wte", "ln_2")),
        Arch("bert", _bert, _tokens, _masked_loss,
             _lm_sites("bert.encoder.layer", "attention.self.query", "intermediate.dense",
                       "bert.embeddings.word_embeddings", "output.LayerNorm")),
        Arch("qwen2", _qwen2, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.v_proj", "mlp.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("moe", _moe, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.shared_expert.up_proj",
                       "model.embed_tokens", "input_layernorm")),
        Arch("vit", _vit, _images, _class_loss,
             _lm_sites("vit.layers", "attention.q_proj", "mlp.fc1",
                       "vit.embeddings.patch_embeddings.projection", "layernorm_after")),
        Arch("cnn", _cnn, _images, _class_loss,
             {"conv": "1.0", "conv-late": "3.0", "stem": "0.0", "norm": "1.1"}, batchnorm=True),
        # Rotation 3's held-out architectures, sites by the same rule: layer 0's attention
        # input projection, layer 1's first MLP projection, the token (patch) embedding the
        # model calls, layer 1's pre-MLP norm; for a convolutional net the stem, the second
        # block's convolution, the first one of the later stage, and the `conv` block's norm.
        Arch("t5", _t5, _tokens, _seq2seq_loss,
             _lm_sites("encoder.block", "layer.0.SelfAttention.q", "layer.1.DenseReluDense.wi",
                       "encoder.embed_tokens", "layer.1.layer_norm")),
        Arch("neox", _neox, _tokens, _causal_loss,
             _lm_sites("gpt_neox.layers", "attention.query_key_value", "mlp.dense_h_to_4h",
                       "gpt_neox.embed_in", "post_attention_layernorm")),
        Arch("convnext", _convnext, _images, _class_loss,
             {"conv": "convnext.encoder.stages.0.layers.1.dwconv",
              "conv-late": "convnext.encoder.stages.1.layers.0.dwconv",
              "stem": "convnext.embeddings.patch_embeddings",
              "norm": "convnext.encoder.stages.0.layers.1.layernorm"}),
        Arch("swin", _swin, _images, _class_loss,
             _lm_sites("swin.encoder.layers.0.blocks", "attention.q_proj", "mlp.fc1",
                       "swin.embeddings.patch_embeddings.projection", "layernorm_after")),
        Arch("mixtral", _mixtral, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.experts",
                       "model.embed_tokens", "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        # Rotation 4's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (Mamba has no attention:
        # its sequence mixer's input projection, x_proj, which computes the scan's
        # input-dependent step and B, C as q/k compute attention's weights), layer 1's first
        # MLP projection (Mamba: in_proj, the first projection of its gated MLP), the token
        # embedding the model calls, layer 1's pre-MLP norm (Mamba: the block's one norm, in
        # front of the mixer); for MobileNetV2 the stem's convolution, the second block's
        # (layer.0's) depthwise convolution, the depthwise convolution of the first block of
        # the next stage (layer.2), and the `conv` convolution's BatchNorm.
        Arch("opt", _opt, _tokens, _causal_loss,
             _lm_sites("model.decoder.layers", "self_attn.q_proj", "fc1",
                       "model.decoder.embed_tokens", "final_layer_norm")),
        Arch("bloom", _bloom, _tokens, _causal_loss,
             _lm_sites("transformer.h", "self_attention.query_key_value", "mlp.dense_h_to_4h",
                       "transformer.word_embeddings", "post_attention_layernorm")),
        Arch("mamba", _mamba, _tokens, _causal_loss,
             {"attention": "backbone.layers.0.mixer.x_proj",
              "mlp": "backbone.layers.1.mixer.in_proj",
              "embedding": "backbone.embeddings",
              "norm": "backbone.layers.1.norm"}),
        Arch("gemma", _gemma, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("mobilenet", _mobilenet, _images, _class_loss,
             {"conv": "mobilenet_v2.layer.0.conv_3x3.convolution",
              "conv-late": "mobilenet_v2.layer.2.conv_3x3.convolution",
              "stem": "mobilenet_v2.conv_stem.first_conv.convolution",
              "norm": "mobilenet_v2.layer.0.conv_3x3.normalization"},
             batchnorm=True),
        # Rotation 5's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (Falcon: its fused
        # query_key_value; RWKV, which has no attention: its time mix's key projection, which
        # weighs the past in the WKV recurrence as a key weighs it in attention), layer 1's
        # first MLP projection (RWKV: its channel mix's key), the token embedding the model
        # calls (ELECTRA: its 32-wide word embedding; Wav2Vec2, which reads audio: the feature
        # projection that turns conv frames into the transformer's tokens, as ViT's patch
        # projection turns patches), layer 1's pre-MLP norm (Falcon: the one LayerNorm both
        # branches of its parallel block read; ELECTRA and Wav2Vec2, post-norm: the norm
        # between attention and MLP); for EfficientNet the stem's convolution, the second
        # block's (blocks.1's) depthwise convolution, the depthwise convolution of the first
        # block of the next stage (blocks.3), and the `conv` convolution's BatchNorm.
        Arch("falcon", _falcon, _tokens, _causal_loss,
             _lm_sites("transformer.h", "self_attention.query_key_value", "mlp.dense_h_to_4h",
                       "transformer.word_embeddings", "input_layernorm")),
        Arch("electra", _electra, _tokens, _masked_loss,
             _lm_sites("electra.encoder.layer", "attention.self.query", "intermediate.dense",
                       "electra.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("rwkv", _rwkv, _tokens, _causal_loss,
             _lm_sites("rwkv.blocks", "attention.key", "feed_forward.key", "rwkv.embeddings",
                       "ln2")),
        Arch("efficientnet", _efficientnet, _images, _class_loss,
             {"conv": "efficientnet.encoder.blocks.1.depthwise_conv.depthwise_conv",
              "conv-late": "efficientnet.encoder.blocks.3.depthwise_conv.depthwise_conv",
              "stem": "efficientnet.embeddings.convolution",
              "norm": "efficientnet.encoder.blocks.1.depthwise_conv.depthwise_norm"},
             batchnorm=True),
        Arch("wav2vec2", _wav2vec2, _waves, _class_loss,
             _lm_sites("wav2vec2.encoder.layers", "attention.q_proj",
                       "feed_forward.intermediate_dense", "wav2vec2.feature_projection.projection",
                       "layer_norm")),
        # Rotation 6's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection),
        # layer 1's first MLP projection (SegFormer: its Mix-FFN's fc1, in front of the
        # depthwise conv; SegFormer's layers counted in its first stage, as Swin's), the token
        # (patch) embedding the model calls (SegFormer: its first stage's overlapping patch
        # convolution, as ViT's projection; Whisper, which reads log-mel frames: its second,
        # strided conv1d, which turns frames into the transformer's tokens, as Wav2Vec2's
        # feature projection does), layer 1's pre-MLP norm (Phi: the one LayerNorm both
        # branches of its parallel block read, as Falcon's; DeBERTa, post-norm: the norm
        # between attention and MLP); for ResNet the stem's convolution, the second block's
        # first convolution, the first convolution of the first block of the next stage, and
        # the `conv` convolution's BatchNorm.
        Arch("phi", _phi, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.fc1", "model.embed_tokens",
                       "input_layernorm")),
        Arch("deberta", _deberta, _tokens, _masked_loss,
             _lm_sites("deberta.encoder.layer", "attention.self.query_proj",
                       "intermediate.dense", "deberta.embeddings.word_embeddings",
                       "attention.output.LayerNorm")),
        Arch("resnet", _resnet, _images, _class_loss,
             {"conv": "resnet.encoder.stages.0.layers.1.layer.0.convolution",
              "conv-late": "resnet.encoder.stages.1.layers.0.layer.0.convolution",
              "stem": "resnet.embedder.embedder.convolution",
              "norm": "resnet.encoder.stages.0.layers.1.layer.0.normalization"},
             batchnorm=True),
        Arch("segformer", _segformer, _images, _class_loss,
             _lm_sites("segformer.stages.0.blocks", "attention.q_proj", "mlp.fc1",
                       "segformer.stages.0.patch_embeddings.proj", "layernorm_after")),
        Arch("whisper", _whisper, _mels, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "fc1", "encoder.conv2",
                       "final_layer_norm")),
        # Rotation 7's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (CodeGen: its fused
        # qkv_proj; Funnel: q_head; the LSTM LM, which has no attention: its first LSTM's
        # input-to-gates projection, which feeds the recurrence as q/k/v feed attention),
        # layer 1's first MLP projection (BART: the encoder's fc1; Funnel: ffn.linear_1, in the
        # second encoder block, whose one layer is Funnel's layer 1), the token embedding the
        # model calls (BART: the encoder's embed_tokens, as T5's), layer 1's pre-MLP norm
        # (CodeGen: the one LayerNorm both branches of its parallel block read, as Phi's; BART
        # and Funnel, post-norm: the norm between attention and MLP); for RegNet the stem's
        # convolution, the second block's first convolution, the first convolution of the
        # first block of the next stage, and the `conv` convolution's BatchNorm.
        Arch("codegen", _codegen, _tokens, _causal_loss,
             _lm_sites("transformer.h", "attn.qkv_proj", "mlp.fc_in", "transformer.wte",
                       "ln_1")),
        Arch("bart", _bart, _tokens, _seq2seq_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.embed_tokens", "self_attn_layer_norm")),
        Arch("funnel", _funnel, _tokens, _masked_loss,
             {"attention": "funnel.encoder.blocks.0.0.attention.q_head",
              "mlp": "funnel.encoder.blocks.1.0.ffn.linear_1",
              "embedding": "funnel.embeddings.word_embeddings",
              "norm": "funnel.encoder.blocks.1.0.attention.layer_norm"}),
        Arch("regnet", _regnet, _images, _class_loss,
             {"conv": "regnet.encoder.stages.0.layers.1.layer.0.convolution",
              "conv-late": "regnet.encoder.stages.1.layers.0.layer.0.convolution",
              "stem": "regnet.embedder.embedder.convolution",
              "norm": "regnet.encoder.stages.0.layers.1.layer.0.normalization"},
             batchnorm=True),
        Arch("lstm", _LstmLm, _tokens, _causal_loss,
             _lm_sites("blocks", "lstm.ih", "mlp.0", "embed", "ln2")),
        # Rotation 8's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (ALBERT: the query of its
        # one shared layer, so the fault strikes both of its calls; FNet, whose Fourier mixing
        # has no weights: the embeddings' projection, the Linear whose output the first
        # mixing reads, as q/k/v read the hidden state; RecurrentGemma, whose layer 0 is the
        # recurrent block: its linear_x, the input projection that feeds the conv1d and the
        # RG-LRU recurrence, as the LSTM's input-to-gates projection), layer 1's first MLP
        # projection (ALBERT: the shared layer's ffn; RecurrentGemma: up_proj, as Gemma's),
        # the token embedding the model calls (ALBERT: its 32-wide word embedding, as
        # ELECTRA's), layer 1's pre-MLP norm (RecurrentGemma: channel_pre_norm; ALBERT and
        # FNet, post-norm: the norm between the mixer and the MLP); for the convolutional
        # nets the stem's convolution, the second block's first convolution (SwiftFormer: its
        # first stage's attention block's local depthwise convolution; PoolFormer, whose
        # pooling mixer has no weights: its MLP's first 1x1 convolution), the first
        # convolution of the first block of the next stage, and the `conv` convolution's norm
        # (PoolFormer: the GroupNorm in front of it).
        Arch("albert", _albert, _tokens, _masked_loss,
             {"attention": f"{_ALBERT_LAYER}.attention.query",
              "mlp": f"{_ALBERT_LAYER}.ffn",
              "embedding": "albert.embeddings.word_embeddings",
              "norm": f"{_ALBERT_LAYER}.attention.LayerNorm"}),
        Arch("fnet", _fnet, _tokens, _masked_loss,
             {"attention": "fnet.embeddings.projection",
              "mlp": "fnet.encoder.layer.1.intermediate.dense",
              "embedding": "fnet.embeddings.word_embeddings",
              "norm": "fnet.encoder.layer.1.fourier.output.LayerNorm"}),
        Arch("recurrentgemma", _recurrent_gemma, _tokens, _causal_loss,
             _lm_sites("model.layers", "temporal_block.linear_x", "mlp_block.up_proj",
                       "model.embed_tokens", "channel_pre_norm")),
        Arch("swiftformer", _swiftformer, _images, _class_loss,
             {"conv": "swiftformer.encoder.network.0.blocks.1.local_representation.depth_wise_conv",
              "conv-late": "swiftformer.encoder.network.2.blocks.0.depth_wise_conv",
              "stem": "swiftformer.patch_embed.patch_embedding.0",
              "norm": "swiftformer.encoder.network.0.blocks.1.local_representation.norm"},
             batchnorm=True),
        Arch("poolformer", _poolformer, _images, _class_loss,
             {"conv": "poolformer.encoder.block.0.1.output.conv1",
              "conv-late": "poolformer.encoder.block.1.0.output.conv1",
              "stem": "poolformer.encoder.patch_embeddings.0.projection",
              "norm": "poolformer.encoder.block.0.1.after_norm"}),
        # Rotation 9's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (GPT-BigCode: its fused
        # c_attn, as GPT-2's; ConvBERT: the query; Pegasus: the encoder's q_proj, as BART's;
        # the gated conv LM, which has no attention: layer 0's causal conv1d, the token
        # mixer's input projection, as the LSTM's input-to-gates projection), layer 1's first
        # MLP projection (Pegasus: the encoder's fc1), the token embedding the model calls
        # (Pegasus: the encoder's embed_tokens, as BART's), layer 1's pre-MLP norm
        # (GPT-BigCode and Pegasus, pre-norm: ln_2 and final_layer_norm; ConvBERT, post-norm:
        # the norm between attention and MLP); for DenseNet the stem's convolution, the
        # second block's (layer's) first convolution, the first convolution of the first
        # block of the next stage, and the BatchNorm of the `conv` convolution's output.
        Arch("bigcode", _bigcode, _tokens, _causal_loss,
             _lm_sites("transformer.h", "attn.c_attn", "mlp.c_fc", "transformer.wte", "ln_2")),
        Arch("convbert", _convbert, _tokens, _masked_loss,
             _lm_sites("convbert.encoder.layer", "attention.self.query", "intermediate.dense",
                       "convbert.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("pegasus", _pegasus, _tokens, _seq2seq_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.embed_tokens", "final_layer_norm")),
        Arch("gcnn", _GatedConvLm, _tokens, _causal_loss,
             _lm_sites("blocks", "conv", "mlp.0", "embed", "ln2")),
        Arch("densenet", _densenet, _images, _class_loss,
             {"conv": "1.1.conv1", "conv-late": "3.0.conv1", "stem": "0", "norm": "1.1.norm2"},
             batchnorm=True),
        # Rotation 10's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # Perceiver, whose layer 0 is the latents' cross-attention to the tokens: that
        # attention's query), layer 1's first MLP projection (Perceiver: its first latent
        # self-attention layer's dense1; DINOv2, SwiGLU: up_proj, as Gemma's), the token
        # (patch) embedding the model calls (DINOv2: the patch convolution, as ViT's; PatchTST,
        # which reads time series: the Linear that turns each patch into a token), layer 1's
        # pre-MLP norm (Perceiver and DINOv2, pre-norm: the norm in front of the MLP;
        # Nystromformer and PatchTST, post-norm: the norm between attention and MLP); for
        # MobileViT the stem's convolution, the second block's first convolution (the 1x1
        # expansion of the first block after the stem's), the first convolution of the first
        # block of the next stage (its downsampling block's expansion), and the `conv`
        # convolution's BatchNorm.
        Arch("mobilevit", _mobilevit, _images, _class_loss,
             {"conv": "mobilevit.encoder.layer.1.layer.0.expand_1x1.convolution",
              "conv-late": "mobilevit.encoder.layer.2.downsampling_layer.expand_1x1.convolution",
              "stem": "mobilevit.conv_stem.convolution",
              "norm": "mobilevit.encoder.layer.1.layer.0.expand_1x1.normalization"},
             batchnorm=True),
        Arch("nystromformer", _nystromformer, _tokens, _masked_loss,
             _lm_sites("nystromformer.encoder.layer", "attention.self.query", "intermediate.dense",
                       "nystromformer.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("perceiver", _perceiver, _tokens, _masked_loss,
             {"attention": "perceiver.encoder.cross_attention.attention.self.query",
              "mlp": "perceiver.encoder.self_attends.0.mlp.dense1",
              "embedding": "perceiver.input_preprocessor.embeddings",
              "norm": "perceiver.encoder.self_attends.0.layernorm"}),
        Arch("patchtst", _patchtst, _series, _forecast_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "ff.0",
                       "model.encoder.embedder.input_embedding", "norm_sublayer1")),
        Arch("dinov2", _dinov2, _images, _class_loss,
             _lm_sites("dinov2.encoder.layer", "attention.q_proj", "mlp.up_proj",
                       "dinov2.embeddings.patch_embeddings.projection", "norm2")),
        # Rotation 11's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # SqueezeBERT: its grouped 1x1 conv1d query; LeViT: the Linear of its fused
        # queries_keys_values, in front of that projection's BatchNorm, as Falcon's fused
        # projection), layer 1's first MLP projection (LeViT, whose stages alternate attention
        # and MLP residual layers: stage 0's second MLP's linear_up Linear; SqueezeBERT: its
        # intermediate conv1d; Jamba, whose layer 1 is a Mamba layer with a mixture of
        # experts: the fused experts, as Mixtral's), the token (patch) embedding the model
        # calls (LeViT: the last of its four stem convolutions, the one that makes the tokens,
        # as SegFormer's patch convolution), layer 1's pre-MLP norm (GPT-Neo: ln_2; Jamba:
        # pre_ff_layernorm; ESM, pre-norm: the LayerNorm in front of the intermediate dense;
        # SqueezeBERT, post-norm: the norm between attention and MLP; LeViT, which has no
        # LayerNorm: the BatchNorm closing layer 1's attention projection, the one between its
        # attention and MLP, as post-norm nets' norm). LeViT has BatchNorm throughout.
        Arch("levit", _levit, _images, _class_loss,
             {"attention": "levit.encoder.stages.0.layers.0.module.queries_keys_values.linear",
              "mlp": "levit.encoder.stages.0.layers.3.module.linear_up.linear",
              "embedding": "levit.patch_embeddings.embedding_layer_4.convolution",
              "norm": "levit.encoder.stages.0.layers.2.module.projection.batch_norm"},
             batchnorm=True),
        Arch("squeezebert", _squeezebert, _tokens, _masked_loss,
             _lm_sites("transformer.encoder.layers", "attention.query", "intermediate.conv1d",
                       "transformer.embeddings.word_embeddings", "post_attention.layernorm")),
        Arch("gptneo", _gpt_neo, _tokens, _causal_loss,
             _lm_sites("transformer.h", "attn.attention.q_proj", "mlp.c_fc", "transformer.wte",
                       "ln_2")),
        Arch("jamba", _jamba, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "feed_forward.experts",
                       "model.embed_tokens", "pre_ff_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("esm", _esm, _tokens, _masked_loss,
             _lm_sites("esm.encoder.layer", "attention.self.query", "intermediate.dense",
                       "esm.embeddings.word_embeddings", "LayerNorm")),
        # Rotation 12's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # ProphetNet: the encoder's query_proj, as BART's; CvT, whose query is a depthwise
        # convolution with BatchNorm and then a Linear: that Linear, projection_query, as
        # LeViT's Linear in front of its BatchNorm; Reformer: its local attention's query;
        # FocalNet, which has no attention: its modulation's projection_in, the Linear that
        # makes the query, context and gates from the hidden state, as q/k/v read it), layer
        # 1's first MLP projection (ProphetNet: the encoder's intermediate Linear; OLMo 2,
        # SwiGLU: up_proj, as Gemma's; Reformer: its feed-forward's first dense; CvT and
        # FocalNet, whose layers are counted in their first stage, as Swin's: the MLP's first
        # Linear), the token (patch) embedding the model calls (ProphetNet: the encoder's
        # word_embeddings, as BART's; CvT: its first stage's overlapping convolutional token
        # embedding, as SegFormer's; FocalNet: its patch convolution, as ViT's), layer 1's
        # pre-MLP norm (Reformer, CvT and FocalNet, pre-norm: the norm in front of the MLP;
        # ProphetNet, post-norm: the norm between attention and MLP; OLMo 2, which has no
        # norm in front of its MLP: the RMS norm on its attention's output, the one between
        # attention and MLP, as post-norm nets' norm). CvT has BatchNorm in its attention.
        Arch("prophetnet", _prophetnet, _tokens, _seq2seq_loss,
             _lm_sites("prophetnet.encoder.layers", "self_attn.query_proj",
                       "feed_forward.intermediate", "prophetnet.encoder.word_embeddings",
                       "self_attn_layer_norm")),
        Arch("olmo2", _olmo2, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("reformer", _reformer, _tokens, _masked_loss,
             _lm_sites("reformer.encoder.layers", "attention.self_attention.query",
                       "feed_forward.dense.dense", "reformer.embeddings.word_embeddings",
                       "feed_forward.layer_norm")),
        Arch("cvt", _cvt, _images, _class_loss,
             {"attention": "cvt.encoder.stages.0.layers.0.attention.attention.projection_query",
              "mlp": "cvt.encoder.stages.0.layers.1.intermediate.dense",
              "embedding": "cvt.encoder.stages.0.embedding.convolution_embeddings.projection",
              "norm": "cvt.encoder.stages.0.layers.1.layernorm_after"},
             batchnorm=True),
        Arch("focalnet", _focalnet, _images, _class_loss,
             _lm_sites("focalnet.encoder.stages.0.layers", "modulation.projection_in", "mlp.fc1",
                       "focalnet.embeddings.patch_embeddings.projection", "norm2")),
        # Rotation 13's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (Persimmon: its fused
        # query_key_value, as Falcon's; CANINE: the query of the deep stack's layer 0 (its
        # one-layer character encoders around that stack are not counted, as Funnel counts
        # its blocks); Autoformer: the encoder's q_proj, whose queries meet the keys by
        # auto-correlation, as BART's; Hiera, whose layers are counted in its first stage, as
        # Swin's: its fused qkv, as GPT-2's c_attn), layer 1's first MLP projection
        # (Persimmon: dense_h_to_4h; CANINE: the intermediate dense; Autoformer: the
        # encoder's fc1; Hiera: the MLP's fc1), the token (patch) embedding the model calls
        # (CANINE, which has no token embedding: the first of its four hash-bucket code-point
        # embeddings; Autoformer, which reads series: the encoder's value projection, the
        # Linear that makes each step's lagged values a token, as PatchTST's; Hiera: its
        # patch convolution, as ViT's), layer 1's pre-MLP norm (Persimmon and Hiera,
        # pre-norm: the norm in front of the MLP; CANINE and Autoformer, post-norm: the norm
        # between attention and MLP, Autoformer's in front of its series decomposition); for
        # MobileNetV1 the stem's convolution, the second block's first convolution (the
        # depthwise convolution of the first block after the stem's), the first convolution
        # of the first block of the next stage (the depthwise convolution that halves the
        # map again), and the `conv` convolution's BatchNorm.
        Arch("persimmon", _persimmon, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.query_key_value", "mlp.dense_h_to_4h",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("canine", _canine, _tokens, _masked_loss,
             _lm_sites("canine.encoder.layer", "attention.self.query", "intermediate.dense",
                       "canine.char_embeddings.HashBucketCodepointEmbedder_0",
                       "attention.output.LayerNorm")),
        Arch("mobilenetv1", _mobilenet_v1, _images, _class_loss,
             {"conv": "mobilenet_v1.layer.2.convolution",
              "conv-late": "mobilenet_v1.layer.6.convolution",
              "stem": "mobilenet_v1.conv_stem.convolution",
              "norm": "mobilenet_v1.layer.2.normalization"},
             batchnorm=True),
        Arch("autoformer", _autoformer, _series, _prediction_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.value_embedding.value_projection",
                       "self_attn_layer_norm")),
        Arch("hiera", _hiera, _images, _class_loss,
             _lm_sites("hiera.encoder.stages.0.layers", "attn.qkv", "mlp.fc1",
                       "hiera.embeddings.patch_embeddings.projection", "layernorm_after")),
        # Rotation 14's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # LED: the encoder's sliding-window query, as BART's q_proj; DiffLlama: q_proj, whose
        # two halves make the two softmax maps; MPNet: the query, q), layer 1's first MLP
        # projection (LED: the encoder's fc1, as BART's; DiffLlama, SwiGLU: up_proj, as
        # Gemma's; MPNet: the intermediate dense; BEiT: the MLP's fc1), the token (patch)
        # embedding the model calls (LED: the encoder's embed_tokens, as BART's; BEiT: its patch
        # convolution, as ViT's), layer 1's pre-MLP norm (DiffLlama and BEiT, pre-norm: the
        # norm in front of the MLP; LED and MPNet, post-norm: the norm between attention and
        # MLP); for HGNetV2 the stem's (first) convolution, the second block's first
        # convolution (the first convolution of the second HG block of stage 0), the first
        # convolution of the first block of the next stage (the 1x1 convolution of its first
        # light layer; the strided depthwise downsampling in front of the block is not a
        # block's), and the `conv` convolution's BatchNorm. HGNetV2 has BatchNorm throughout.
        Arch("led", _led, _tokens, _seq2seq_loss,
             _lm_sites("led.encoder.layers", "self_attn.longformer_self_attn.query", "fc1",
                       "led.encoder.embed_tokens", "self_attn_layer_norm")),
        Arch("diffllama", _diffllama, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("mpnet", _mpnet, _tokens, _masked_loss,
             _lm_sites("mpnet.encoder.layer", "attention.attn.q", "intermediate.dense",
                       "mpnet.embeddings.word_embeddings", "attention.LayerNorm")),
        Arch("beit", _beit, _images, _class_loss,
             _lm_sites("beit.layers", "attention.q_proj", "mlp.fc1",
                       "beit.embeddings.patch_embeddings.projection", "layernorm_after")),
        Arch("hgnetv2", _hgnet_v2, _images, _class_loss,
             {"conv": "encoder.stages.0.blocks.1.layers.0.convolution",
              "conv-late": "encoder.stages.1.blocks.0.layers.0.conv1.convolution",
              "stem": "embedder.stem1.convolution",
              "norm": "encoder.stages.0.blocks.1.layers.0.normalization"},
             batchnorm=True),
        # Rotation 15's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # Switch: the encoder's q, as T5's; ModernBERT: its fused Wqkv, as Falcon's; LFM2,
        # whose layer 0 attends: q_proj; PatchTSMixer, whose patch mixer carries the
        # self-attention: that attention's q_proj), layer 1's first MLP projection (Switch,
        # whose encoder layer 1 is the mixture of experts, unfused: the first expert's wi, the
        # first projection of the first expert; ModernBERT: Wi, the fused GeGLU input and gate;
        # LFM2, SwiGLU: w3, the up projection, as Gemma's up_proj; PatchTSMixer, whose layer
        # mixes the channels first: the channel mixer's fc1), the token (patch) embedding the
        # model calls (Switch: the encoder's embed_tokens, as T5's; PatchTSMixer, which reads
        # series: the patcher, the Linear that makes each patch a token, as PatchTST's), layer
        # 1's pre-MLP norm (all pre-norm: Switch: the feed-forward's layer_norm, as T5's;
        # ModernBERT: mlp_norm; LFM2: ffn_norm; PatchTSMixer: the channel mixer's LayerNorm,
        # in front of its MLP); for TextNet the stem's convolution, the second block's first
        # convolution (the main convolution of stage 0's second layer), the first convolution
        # of the first block of the next stage (the main convolution of stage 1's first
        # layer), and the `conv` convolution's BatchNorm. TextNet has BatchNorm throughout.
        Arch("switch", _switch, _tokens, _seq2seq_loss,
             _lm_sites("encoder.block", "layer.0.SelfAttention.q",
                       "layer.1.mlp.experts.expert_0.wi", "encoder.embed_tokens",
                       "layer.1.layer_norm")),
        Arch("modernbert", _modernbert, _tokens, _masked_loss,
             _lm_sites("model.layers", "attn.Wqkv", "mlp.Wi", "model.embeddings.tok_embeddings",
                       "mlp_norm")),
        Arch("lfm2", _lfm2, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "feed_forward.w3",
                       "model.embed_tokens", "ffn_norm")),
        Arch("textnet", _textnet, _images, _class_loss,
             {"conv": "textnet.encoder.stages.0.stage.1.main_conv",
              "conv-late": "textnet.encoder.stages.1.stage.0.main_conv",
              "stem": "textnet.stem.conv",
              "norm": "textnet.encoder.stages.0.stage.1.main_batch_norm"},
             batchnorm=True),
        Arch("patchtsmixer", _patchtsmixer, _series, _forecast_loss,
             _lm_sites("model.encoder.mlp_mixer_encoder.mixers",
                       "patch_mixer.self_attn_layer.q_proj", "channel_feature_mixer.mlp.fc1",
                       "model.encoder.patcher", "channel_feature_mixer.norm.norm")),
        # Rotation 16's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (Qwen3-Next, whose layer 0
        # is the Gated DeltaNet: its fused in_proj_qkvz, the Linear that makes the queries,
        # keys, values and output gate, as Falcon's fused query_key_value; YOSO: the query;
        # TimesFM: q_proj), layer 1's first MLP projection (Qwen3-Next, whose MLP is a mixture
        # of experts beside a shared expert: the shared expert's up_proj, as Qwen2-MoE's;
        # YOSO: the intermediate dense; TimesFM: gate_proj, the first of its MLP's two
        # Linears despite the name, in front of its ReLU), the token (patch) embedding the
        # model calls (TimesFM, which reads series: input_ff_layer, the residual block that
        # makes each patch a token, as PatchTST's patch Linear), layer 1's pre-MLP norm
        # (Qwen3-Next, pre-norm: post_attention_layernorm, the norm in front of the MLP; YOSO,
        # post-norm: the norm between attention and MLP; TimesFM: the LayerNorm at the head of
        # its MLP, in front of gate_proj); for BiT and PP-LCNet the stem's convolution, the
        # second block's first convolution (BiT: conv1 of stage 0's second bottleneck;
        # PP-LCNet, whose first stage has one block: the depthwise convolution of stage 1's
        # first block, the second depthwise-separable block, as MobileNetV1's), the first
        # convolution of the first block of the next stage (BiT: conv1 of stage 1's first
        # bottleneck, the main path's, not its projection shortcut; PP-LCNet: the depthwise
        # convolution of stage 2's first block), and the `conv` convolution's norm (PP-LCNet:
        # its BatchNorm; BiT, pre-activation, which has no BatchNorm: norm2, the GroupNorm
        # that normalizes conv1's output, as a BatchNorm follows its convolution). PP-LCNet
        # has BatchNorm throughout; BiT's GroupNorms see one image at a time.
        Arch("qwen3next", _qwen3_next, _tokens, _causal_loss,
             _lm_sites("model.layers", "linear_attn.in_proj_qkvz", "mlp.shared_expert.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("yoso", _yoso, _tokens, _masked_loss,
             _lm_sites("yoso.encoder.layer", "attention.self.query", "intermediate.dense",
                       "yoso.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("bit", _bit, _images, _class_loss,
             {"conv": "bit.encoder.stages.0.layers.1.conv1",
              "conv-late": "bit.encoder.stages.1.layers.0.conv1",
              "stem": "bit.embedder.convolution",
              "norm": "bit.encoder.stages.0.layers.1.norm2"}),
        Arch("pplcnet", _pp_lcnet, _images, _class_loss,
             {"conv": "encoder.blocks.1.layers.0.depthwise_convolution.convolution",
              "conv-late": "encoder.blocks.2.layers.0.depthwise_convolution.convolution",
              "stem": "encoder.convolution.convolution",
              "norm": "encoder.blocks.1.layers.0.depthwise_convolution.normalization"},
             batchnorm=True),
        Arch("timesfm", _timesfm, _series, _timesfm_loss,
             _lm_sites("decoder.layers", "self_attn.q_proj", "mlp.gate_proj",
                       "decoder.input_ff_layer", "mlp.layer_norm")),
        # Rotation 17's held-out architectures, sites by the same rule, written down before
        # any of their runs: layer 0's attention input projection (the query projection;
        # Informer: the encoder's q_proj, whose queries are scored against sampled keys for
        # ProbSparse attention, as Autoformer's; RoFormer: the query), layer 1's first MLP
        # projection (Informer: the encoder's fc1, as Autoformer's; Cohere, SwiGLU: up_proj,
        # as Gemma's; RoFormer: the intermediate dense), the token (patch) embedding the model
        # calls (Informer, which reads series: the encoder's value projection, the Linear that
        # makes each step's lagged values a token, as Autoformer's), layer 1's pre-MLP norm
        # (Cohere, whose attention and MLP sit side by side: input_layernorm, the one norm in
        # front of both, as a parallel block's; Informer and RoFormer, post-norm: the norm
        # between attention and MLP); for ConvNeXt V2 and ResNet-D the stem's (first)
        # convolution (ConvNeXt V2: its patch convolution, as ConvNeXt's; ResNet-D: the first
        # of its three stem convolutions), the second block's first convolution (ConvNeXt V2:
        # the depthwise convolution of stage 0's second layer, as ConvNeXt's; ResNet-D: conv
        # 0 of stage 0's second basic block), the first convolution of the first block of the
        # next stage (ConvNeXt V2: stage 1's first depthwise convolution; ResNet-D: conv 0 of
        # stage 1's first block, the main path's, not its pooled shortcut's), and the `conv`
        # convolution's norm (ConvNeXt V2: the channel LayerNorm that follows it, as
        # ConvNeXt's; ResNet-D: its BatchNorm). ResNet-D has BatchNorm throughout.
        Arch("informer", _informer, _series, _informer_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.value_embedding.value_projection",
                       "self_attn_layer_norm")),
        Arch("cohere", _cohere, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "input_layernorm")),
        Arch("roformer", _roformer, _tokens, _masked_loss,
             _lm_sites("roformer.encoder.layer", "attention.self.query", "intermediate.dense",
                       "roformer.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("convnextv2", _convnext_v2, _images, _class_loss,
             {"conv": "convnextv2.encoder.stages.0.layers.1.dwconv",
              "conv-late": "convnextv2.encoder.stages.1.layers.0.dwconv",
              "stem": "convnextv2.embeddings.patch_embeddings",
              "norm": "convnextv2.encoder.stages.0.layers.1.layernorm"}),
        Arch("resnetd", _ResNetD, _images, _class_loss,
             {"conv": "backbone.encoder.stages.0.layers.1.layer.0.convolution",
              "conv-late": "backbone.encoder.stages.1.layers.0.layer.0.convolution",
              "stem": "backbone.embedder.embedder.0.convolution",
              "norm": "backbone.encoder.stages.0.layers.1.layer.0.normalization"},
             batchnorm=True),
        # Rotation 18's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (DeepSeek-V3, whose queries pass through
        # a latent: q_a_proj, the query projection that reads the layer's normed input; MiniMax,
        # whose layer 0 is lightning attention: its fused qkv_proj, as Falcon's and BLOOM's fused
        # projections; xLSTM, whose mLSTM has queries: q; WavLM, whose query, key and value
        # projections run inside torch's multi_head_attention_forward on their weights, their
        # modules never called, so no hook can sit on them: the one projection of the attention's
        # input that is called, gru_rel_pos_linear, which computes from each head's slice of the
        # input the gate on the relative position bias, a part of the attention weights, as Mamba's
        # x_proj), layer 1's first MLP projection (DeepSeek-V3, a MoE layer with a shared expert:
        # the shared expert's up_proj, as Qwen2-MoE's; MiniMax, a MoE layer without one: the fused
        # experts, lane faults on gate_up_proj, as Mixtral's; xLSTM, gated: proj_up, as Gemma's
        # up_proj; WavLM: the intermediate dense, as Wav2Vec2's), the token embedding the model
        # calls (WavLM, which reads audio: the feature projection, as Wav2Vec2's), layer 1's pre-MLP
        # norm (DeepSeek-V3 and MiniMax: post_attention_layernorm; xLSTM: norm_ffn; WavLM,
        # post-norm: the norm between attention and MLP, as Wav2Vec2's); for RepVGG, whose stem is
        # its first stage's one block: the stem's 3x3 convolution, the second block's first (3x3)
        # convolution (the first block of stage 1, counting the stem as the first block, as the
        # CNN's), the first (3x3) convolution of the first block of the next stage (stage 2), and
        # the `conv` convolution's BatchNorm. RepVGG has BatchNorm throughout.
        Arch("deepseekv3", _deepseek_v3, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_a_proj", "mlp.shared_experts.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("minimax", _minimax, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.qkv_proj", "mlp.experts",
                       "model.embed_tokens", "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("xlstm", _xlstm, _tokens, _causal_loss,
             _lm_sites("backbone.blocks", "mlstm_layer.q", "ffn.proj_up", "backbone.embeddings",
                       "norm_ffn")),
        Arch("repvgg", _RepVGG, _images, _class_loss,
             {"conv": "backbone.stages.1.blocks.0.conv1.conv",
              "conv-late": "backbone.stages.2.blocks.0.conv1.conv",
              "stem": "backbone.stages.0.blocks.0.conv1.conv",
              "norm": "backbone.stages.1.blocks.0.conv1.norm"},
             batchnorm=True),
        Arch("wavlm", _wavlm, _waves, _class_loss,
             _lm_sites("wavlm.encoder.layers", "attention.gru_rel_pos_linear",
                       "feed_forward.intermediate_dense", "wavlm.feature_projection.projection",
                       "layer_norm")),
        # Rotation 19's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Zamba2, whose layer 0 is Mamba2 only:
        # its fused in_proj, the Linear that makes the gate, x, B, C and the step, as Qwen3-Next's
        # in_proj_qkvz; T5Gemma: the encoder's q_proj, as T5's; Wav2Vec2-BERT: the query,
        # linear_q), layer 1's first MLP projection (Zamba2: the shared block's fused
        # gate_up_proj, as ModernBERT's Wi; T5Gemma, gated: the encoder's up_proj, as Gemma's;
        # Wav2Vec2-BERT, whose Conformer layer opens with a half-step feed-forward: that
        # feed-forward's intermediate dense), the token embedding the model calls (T5Gemma: the
        # encoder's embed_tokens, as T5's; Wav2Vec2-BERT, which reads log-mel frames: the feature
        # projection, as Wav2Vec2's), layer 1's pre-MLP norm (Zamba2: the shared block's
        # pre_ff_layernorm; T5Gemma: the encoder's pre_feedforward_layernorm; Wav2Vec2-BERT:
        # ffn1_layer_norm, in front of the first feed-forward); for MobileViTV2 the stem's
        # convolution, the second block's first convolution (the 1x1 expansion of the first block
        # after the stem's, as MobileViT's), the first convolution of the first block of the next
        # stage (its downsampling block's expansion, as MobileViT's), and the `conv` convolution's
        # BatchNorm; for UnivNet, a convolutional vocoder whose stages are its upsampling LVC
        # blocks and whose blocks are their residual layers: the stem (conv_pre, on the noise),
        # the second block's first convolution (the dilated convolution of stage 0's second
        # residual layer), the first convolution of the first block of the next stage (that of
        # stage 1's first residual layer; the transposed convolution in front of the layers is not
        # a layer's), and no norm: UnivNet has no normalization layer. MobileViTV2 has BatchNorm
        # in its convolutions.
        Arch("zamba2", _zamba2, _tokens, _causal_loss,
             _lm_sites("model.layers", "mamba.in_proj",
                       "shared_transformer.feed_forward.gate_up_proj", "model.embed_tokens",
                       "shared_transformer.pre_ff_layernorm")),
        Arch("t5gemma", _T5Gemma, _tokens, _seq2seq_loss,
             _lm_sites("model.model.encoder.layers", "self_attn.q_proj", "mlp.up_proj",
                       "model.model.encoder.embed_tokens", "pre_feedforward_layernorm")),
        Arch("mobilevitv2", _mobilevit_v2, _images, _class_loss,
             {"conv": "mobilevitv2.encoder.layer.1.layer.0.expand_1x1.convolution",
              "conv-late": "mobilevitv2.encoder.layer.2.downsampling_layer.expand_1x1.convolution",
              "stem": "mobilevitv2.conv_stem.convolution",
              "norm": "mobilevitv2.encoder.layer.1.layer.0.expand_1x1.normalization"},
             batchnorm=True),
        Arch("w2vbert", _w2v_bert, _mel_frames, _class_loss,
             _lm_sites("wav2vec2_bert.encoder.layers", "self_attn.linear_q",
                       "ffn1.intermediate_dense", "wav2vec2_bert.feature_projection.projection",
                       "ffn1_layer_norm")),
        Arch("univnet", _univnet, _spectra, _vocoder_loss,
             {"conv": "resblocks.0.resblocks.1.conv",
              "conv-late": "resblocks.1.resblocks.0.conv",
              "stem": "conv_pre"}),
        # Rotation 20's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (LongT5: the encoder's transient-global
        # attention's q, as T5's; Falcon-H1, whose every layer runs attention and Mamba2 side by
        # side: the attention's q_proj; Parakeet: q_proj; Decision Transformer, a GPT-2 inside:
        # its fused c_attn, as GPT-2's), layer 1's first MLP projection (LongT5, gated-GELU: the
        # encoder's wi_1, the linear branch, as Gemma's up_proj; Falcon-H1, SwiGLU: up_proj, as
        # Gemma's; Parakeet, whose Conformer layer opens with a half-step feed-forward: that
        # feed-forward's linear1, as Wav2Vec2-BERT's; Decision Transformer: c_fc, as GPT-2's), the
        # token embedding the model calls (LongT5: the encoder's embed_tokens, as T5's; Parakeet,
        # which reads log-mel frames: the subsampling's Linear that makes each subsampled step a
        # token, as Wav2Vec2's feature projection; Decision Transformer, whose tokens are returns,
        # states and actions, each embedded by its own Linear: embed_state, the embedding of the
        # tokens the actions are read from), layer 1's pre-MLP norm (LongT5: the encoder's
        # layer_norm of its feed-forward layer, as T5's; Falcon-H1: pre_ff_layernorm; Parakeet:
        # norm_feed_forward1, in front of the first feed-forward, as Wav2Vec2-BERT's; Decision
        # Transformer: ln_2, as GPT-2's); for PP-LCNetV3, whose first stage has one block, as
        # PP-LCNet's: the stem's convolution, the second block's first convolution (stage 1's first
        # block's depthwise reparameterization layer: its first kxk branch's convolution), the
        # first convolution of the first block of the next stage (stage 2's first block's
        # depthwise layer, its first kxk branch's convolution), and the `conv` convolution's
        # BatchNorm (that branch's). PP-LCNetV3 has BatchNorm throughout; Parakeet has BatchNorm in
        # its convolution modules, so its healthy reruns vary only the kernels too.
        Arch("longt5", _longt5, _tokens, _seq2seq_loss,
             _lm_sites("encoder.block", "layer.0.TransientGlobalSelfAttention.q",
                       "layer.1.DenseReluDense.wi_1", "encoder.embed_tokens",
                       "layer.1.layer_norm")),
        Arch("falconh1", _falcon_h1, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "feed_forward.up_proj",
                       "model.embed_tokens", "pre_ff_layernorm")),
        Arch("pplcnetv3", _PPLCNetV3, _images, _class_loss,
             {"conv": f"{_V3_DW1}.conv_symmetric.0.convolution",
              "conv-late": f"{_V3_DW2}.conv_symmetric.0.convolution",
              "stem": "backbone.encoder.convolution.convolution",
              "norm": f"{_V3_DW1}.conv_symmetric.0.normalization"},
             batchnorm=True),
        Arch("parakeet", _Parakeet, _mel_maps, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "feed_forward1.linear1",
                       "encoder.subsampling.linear", "norm_feed_forward1"),
             batchnorm=True),
        Arch("decision", _decision_transformer, _episodes, _action_loss,
             _lm_sites("encoder.h", "attn.c_attn", "mlp.c_fc", "embed_state", "ln_2")),
        # Rotation 21's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Gemma 3n, GPT-OSS: q_proj; Swin V2:
        # the query of stage 0's first block, as Swin's; SEW-D, DeBERTa-v2's layers inside:
        # query_proj, as DeBERTa's), layer 1's first MLP projection (Gemma 3n, GELU-tanh gated:
        # up_proj, as Gemma's; GPT-OSS, a sparse MoE: the experts, their fused gate_up_proj the
        # lane weight, as Mixtral's; Swin V2: intermediate.dense of stage 0's second block; SEW-D:
        # intermediate.dense, as DeBERTa's), the token embedding the model calls (Gemma 3n: the
        # main embed_tokens, not the per-layer one; Swin V2: the patch projection; SEW-D, which
        # reads waveforms: the feature projection, as Wav2Vec2's), layer 1's pre-MLP norm (Gemma
        # 3n: pre_feedforward_layernorm; GPT-OSS: post_attention_layernorm, as Mixtral's; Swin
        # V2, res-post-norm, whose MLP input no norm sees: layernorm_before, the norm that closes
        # the attention branch just ahead of the MLP; SEW-D, post-norm: attention.output's
        # LayerNorm, as DeBERTa's); for EnCodec's SEANet encoder (a convnet, no attention), the
        # stem's convolution, the second block's first convolution (stage 1's residual block's
        # dilated 3-wide convolution), the first convolution of the first block of the next stage
        # (stage 2's residual block's), and the `conv` convolution's GroupNorm. No BatchNorm in any
        # of the five.
        Arch("gemma3n", _gemma3n, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "pre_feedforward_layernorm")),
        Arch("gptoss", _gpt_oss, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.experts", "model.embed_tokens",
                       "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("swinv2", _swinv2, _images, _class_loss,
             _lm_sites("swinv2.encoder.layers.0.blocks", "attention.self.query",
                       "intermediate.dense", "swinv2.embeddings.patch_embeddings.projection",
                       "layernorm_before")),
        Arch("sewd", _sew_d, _waves, _class_loss,
             _lm_sites("sew_d.encoder.encoder.layer", "attention.self.query_proj",
                       "intermediate.dense", "sew_d.feature_projection",
                       "attention.output.LayerNorm")),
        Arch("encodec", _Encodec, _waves, _class_loss,
             {"conv": "encoder.layers.1.block.1.conv",
              "conv-late": "encoder.layers.4.block.1.conv",
              "stem": "encoder.layers.0.conv",
              "norm": "encoder.layers.1.block.1.norm"}),
        # Rotation 22's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (JetMoE, whose queries come from a
        # mixture of attention heads: the MoA's input_linear, the fused query experts that read
        # the layer's normed input, as DeepSeek-V3's q_a_proj is the query projection that reads
        # it; PEGASUS-X: the encoder's q_proj, as Pegasus's; PVT: the query of stage 0's first
        # block, as SegFormer's; Data2Vec-Audio: q_proj, as Wav2Vec2's), layer 1's first MLP
        # projection (JetMoE, a sparse MoE: its fused input_linear experts, lane faults on their
        # (experts, out, in) weight, as Mixtral's; PEGASUS-X: the encoder's fc1, as Pegasus's;
        # PVT: dense1 of stage 0's second block, as SegFormer's fc1; Data2Vec-Audio: the
        # intermediate dense, as Wav2Vec2's), the token embedding the model calls (PEGASUS-X:
        # the encoder's embed_tokens, as Pegasus's; PVT: stage 0's patch projection, as
        # SegFormer's; Data2Vec-Audio, which reads waveforms: the feature projection, as
        # Wav2Vec2's), layer 1's pre-MLP norm (JetMoE: post_attention_layernorm, as Mixtral's;
        # PEGASUS-X, pre-norm: final_layer_norm, as Pegasus's; PVT, pre-norm: layer_norm_2;
        # Data2Vec-Audio, post-norm: the norm between attention and MLP, as Wav2Vec2's); for the
        # DAC encoder (a convnet, no attention), whose stages are its strided encoder blocks and
        # whose blocks are their residual units: the stem's convolution, the second block's first
        # convolution (the dilated convolution of stage 0's second residual unit), the first
        # convolution of the first block of the next stage (that of stage 1's first residual
        # unit), and no norm: DAC has no normalization layer, as UnivNet. No BatchNorm in any of
        # the five.
        Arch("jetmoe", _jetmoe, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attention.experts.input_linear", "mlp.input_linear",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("pegasusx", _pegasus_x, _tokens, _seq2seq_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.embed_tokens", "final_layer_norm")),
        Arch("pvt", _pvt, _images, _class_loss,
             _lm_sites("pvt.encoder.block.0", "attention.self.query", "mlp.dense1",
                       "pvt.encoder.patch_embeddings.0.projection", "layer_norm_2")),
        Arch("data2vec", _data2vec_audio, _waves, _class_loss,
             _lm_sites("data2vec_audio.encoder.layers", "attention.q_proj",
                       "feed_forward.intermediate_dense",
                       "data2vec_audio.feature_projection.projection", "layer_norm")),
        Arch("dac", _Dac, _waves, _class_loss,
             {"conv": "encoder.block.0.res_unit2.conv1",
              "conv-late": "encoder.block.1.res_unit1.conv1",
              "stem": "encoder.conv1"}),
        # Rotation 23's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Mamba-2 has no attention: its
        # mixer's in_proj, which makes the scan's B, C and steps, as Zamba2's; NLLB-MoE: the
        # encoder's q_proj, as Pegasus's; ViTDet: the fused qkv of block 0, as Hiera's; AST:
        # q_proj, as ViT's; Time Series Transformer: the encoder's q_proj, as Informer's), layer
        # 1's first MLP projection (Mamba-2, no MLP: layer 1's in_proj, as Mamba's; NLLB-MoE,
        # whose layer 1 is sparse: expert 0's fc1, as Switch's expert 0 wi; ViTDet and AST: the
        # MLP's fc1; Time Series Transformer: the encoder's fc1, as Informer's), the token
        # (patch) embedding the model calls (NLLB-MoE: the encoder's embed_tokens; ViTDet and
        # AST: the patch convolution, as ViT's; Time Series Transformer: the value projection,
        # as Informer's), layer 1's pre-MLP norm (Mamba-2: the block's one norm, in front of the
        # mixer, as Mamba's; NLLB-MoE, pre-norm: ff_layer_norm; ViTDet, pre-norm: norm2; AST,
        # pre-norm: layernorm_after, as ViT's; Time Series Transformer, post-norm:
        # self_attn_layer_norm, as Informer's). No BatchNorm in any of the five.
        Arch("mamba2", _mamba2, _tokens, _causal_loss,
             {"attention": "backbone.layers.0.mixer.in_proj",
              "mlp": "backbone.layers.1.mixer.in_proj",
              "embedding": "backbone.embeddings",
              "norm": "backbone.layers.1.norm"}),
        Arch("nllbmoe", _nllb_moe, _tokens, _seq2seq_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "ffn.experts.expert_0.fc1",
                       "model.encoder.embed_tokens", "ff_layer_norm")),
        Arch("vitdet", _VitDet, _images, _class_loss,
             _lm_sites("backbone.encoder.layer", "attention.qkv", "mlp.fc1",
                       "backbone.embeddings.projection", "norm2")),
        Arch("ast", _ast, _mel_frames, _class_loss,
             _lm_sites("audio_spectrogram_transformer.layers", "attention.q_proj", "mlp.fc1",
                       "audio_spectrogram_transformer.embeddings.patch_embeddings.projection",
                       "layernorm_after")),
        Arch("tst", _time_series_transformer, _series, _prediction_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.value_embedding.value_projection",
                       "self_attn_layer_norm")),
        # Rotation 24's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Doge: q_proj, whose scores the
        # dynamic mask then biases and prunes; Nemotron-H, whose layers are a Mamba-2 block, an
        # attention block and an MLP block: the first attention block's q_proj; AIMv2: q_proj,
        # as ViT's; Mimi: the encoder transformer's q_proj), layer 1's first MLP projection
        # (Doge, SwiGLU: up_proj, as Gemma's; Nemotron-H: the second MLP block's up_proj, its
        # only input projection; AIMv2, SwiGLU: up_proj, as Gemma's; Mimi: the encoder
        # transformer's fc1), the token (patch) embedding the model calls (Doge:
        # model.embed_tokens; Nemotron-H: model.embeddings; AIMv2: the patch convolution, as
        # ViT's; Mimi, which reads waveforms: the SEANet's last convolution, the one that makes
        # each step the transformer's token, as Parakeet's subsampling Linear), layer 1's pre-MLP
        # norm (Doge: post_attention_layernorm, as Mixtral's; Nemotron-H: the second MLP block's
        # one norm, in front of its mixer, as Mamba's; AIMv2, pre-norm: rms_norm2; Mimi,
        # pre-norm: post_attention_layernorm); for SpeechT5's HiFi-GAN (a convnet, no
        # attention), whose stages are its upsampling steps and whose blocks are the residual
        # blocks each stage fuses: the stem's convolution (conv_pre), the second block's first
        # convolution (stage 0's second residual block's first dilated convolution), the first
        # convolution of the first block of the next stage (that of stage 1's first residual
        # block), and no norm: HiFi-GAN has no normalization layer, as UnivNet. No BatchNorm in
        # any of the five.
        Arch("doge", _doge, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("nemotronh", _nemotron_h, _tokens, _causal_loss,
             {"attention": "model.layers.1.mixer.q_proj",
              "mlp": "model.layers.5.mixer.up_proj",
              "embedding": "model.embeddings",
              "norm": "model.layers.5.norm"}),
        Arch("aimv2", _Aimv2, _images, _class_loss,
             _lm_sites("backbone.encoder.layers", "attention.q_proj", "ffn.up_proj",
                       "backbone.embeddings.patch_embed", "rms_norm2")),
        Arch("mimi", _Mimi, _waves, _class_loss,
             _lm_sites("encoder.encoder_transformer.layers", "self_attn.q_proj", "mlp.fc1",
                       "encoder.encoder_seanet.layers.8.conv", "post_attention_layernorm")),
        Arch("hifigan", _HifiGan, _spectra, _vocoder_loss,
             {"conv": "vocoder.resblocks.1.convs1.0",
              "conv-late": "vocoder.resblocks.2.convs1.0",
              "stem": "vocoder.conv_pre"}),
        # Rotation 25's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (HRM-Text, whose two one-block stacks
        # are its layers, the low-level one run first: the low-level block's q_proj, struck at
        # every cycle it runs, as ALBERT's shared layer; BigBird: its query, as BERT's; DINOv3:
        # q_proj, as DINOv2's; Speech2Text: the encoder's q_proj, as Whisper's), layer 1's first
        # MLP projection (HRM-Text, SwiGLU: the high-level block's up_proj, as Gemma's; BigBird:
        # intermediate.dense, as BERT's; DINOv3: up_proj, as DINOv2's; Speech2Text: fc1, as
        # Whisper's), the token (patch) embedding the model calls (HRM-Text, BigBird: the word
        # embeddings; DINOv3: the patch convolution, as DINOv2's; Speech2Text, which reads
        # log-mel frames: the subsampler's second convolution, the one that makes the tokens, as
        # Whisper's conv2), layer 1's pre-MLP norm (HRM-Text: the high-level block's
        # post_attention_layernorm, as Mixtral's; BigBird, post-norm: the norm between attention
        # and MLP, as ELECTRA's; DINOv3, pre-norm: norm2, as DINOv2's; Speech2Text, pre-norm:
        # final_layer_norm, as Whisper's); for SuperPoint (a convnet, no attention), whose
        # stages are its four conv blocks, each one block of two convolutions: the stem's
        # convolution (block 0's conv_a), the second block's first convolution (block 1's
        # conv_a), the first convolution of the first block of the next stage (block 2's
        # conv_a), and no norm: SuperPoint has no normalization layer, as HiFi-GAN. No BatchNorm
        # in any of the five.
        Arch("hrmtext", _hrm_text, _tokens, _causal_loss,
             {"attention": "model.L_module.layers.0.self_attn.q_proj",
              "mlp": "model.H_module.layers.0.mlp.up_proj",
              "embedding": "model.embed_tokens",
              "norm": "model.H_module.layers.0.post_attention_layernorm"}),
        Arch("bigbird", _big_bird, _tokens, _masked_loss,
             _lm_sites("bert.encoder.layer", "attention.self.query", "intermediate.dense",
                       "bert.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("dinov3", _Dinov3Vit, _images, _class_loss,
             _lm_sites("backbone.model.layer", "attention.q_proj", "mlp.up_proj",
                       "backbone.embeddings.patch_embeddings", "norm2")),
        Arch("speech2text", _Speech2Text, _mel_frames, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "fc1", "encoder.conv.conv_layers.1",
                       "final_layer_norm")),
        Arch("superpoint", _SuperPoint, _images, _class_loss,
             {"conv": "net.encoder.conv_blocks.1.conv_a",
              "conv-late": "net.encoder.conv_blocks.2.conv_a",
              "stem": "net.encoder.conv_blocks.0.conv_a"}),
        # Rotation 26's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (CTRL: its query projection Wq, as
        # GPT-2's attention input; Granite-hybrid, whose layer 0 is a Mamba-2 layer: its mixer's
        # in_proj, as Zamba2's; SigLIP: q_proj, as ViT's; Moonshine: the encoder's q_proj, as
        # Whisper's; ViTPose: the backbone's query, as ViT's), layer 1's first MLP projection
        # (CTRL: ffn.0; Granite-hybrid, a mixture of experts beside a shared MLP: the shared
        # MLP's input_linear, as Qwen2-MoE's shared expert; SigLIP, Moonshine, ViTPose: fc1), the
        # token (patch) embedding the model calls (CTRL, Granite-hybrid: the token embeddings;
        # SigLIP, ViTPose: the patch convolution; Moonshine, which reads waveforms: its stem's
        # third convolution, the one that makes the tokens, as Whisper's conv2), layer 1's
        # pre-MLP norm (CTRL: layernorm2; Granite-hybrid: post_attention_layernorm, as Mixtral's;
        # SigLIP: layer_norm2; Moonshine: post_attention_layernorm; ViTPose: layernorm_after, as
        # ViT's). No BatchNorm in any of the five (ViTPose's classic decoder has BatchNorm; its
        # simple decoder, used here, has none).
        Arch("ctrl", _ctrl, _tokens, _causal_loss,
             _lm_sites("transformer.h", "multi_head_attention.Wq", "ffn.0", "transformer.w",
                       "layernorm2")),
        Arch("granitehybrid", _granite_hybrid, _tokens, _causal_loss,
             {"attention": "model.layers.0.mamba.in_proj",
              "mlp": "model.layers.1.shared_mlp.input_linear",
              "embedding": "model.embed_tokens",
              "norm": "model.layers.1.post_attention_layernorm"}),
        Arch("siglip", _Siglip, _images, _class_loss,
             _lm_sites("backbone.encoder.layers", "self_attn.q_proj", "mlp.fc1",
                       "backbone.embeddings.patch_embedding", "layer_norm2")),
        Arch("moonshine", _Moonshine, _waves, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "mlp.fc1", "encoder.conv3",
                       "post_attention_layernorm")),
        Arch("vitpose", _VitPose, _images, _class_loss,
             _lm_sites("pose.backbone.encoder.layer", "attention.attention.query", "mlp.fc1",
                       "pose.backbone.embeddings.patch_embeddings.projection",
                       "layernorm_after")),
        # Rotation 27's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (FSMT: the encoder's q_proj, as BART's;
        # BitNet: q_proj; DaViT, whose every block is a pair of layers, a spatial one then a
        # channel one: the spatial layer's fused window-attention qkv, as Hiera's qkv; SEW: the
        # encoder's q_proj, as Wav2Vec2's; YOLOS: the query, as ViT's), layer 1's first MLP
        # projection (FSMT: fc1; BitNet: up_proj, as Qwen2's; DaViT: the channel layer's ffn.fc1;
        # SEW: feed_forward.intermediate_dense; YOLOS: intermediate.dense), the token (patch)
        # embedding the model calls (FSMT: the encoder's token embeddings; BitNet: the token
        # embeddings; DaViT: its first patch convolution; SEW: its feature projection, as
        # SEW-D's; YOLOS: the patch convolution), layer 1's pre-MLP norm (FSMT, post-norm:
        # self_attn_layer_norm, as BART's; BitNet: post_attention_layernorm; DaViT: the channel
        # layer's norm2; SEW, post-norm: layer_norm, as Wav2Vec2's; YOLOS: layernorm_after, as
        # ViT's). No BatchNorm in any of the five.
        Arch("fsmt", _fsmt, _tokens, _seq2seq_loss,
             _lm_sites("model.encoder.layers", "self_attn.q_proj", "fc1",
                       "model.encoder.embed_tokens", "self_attn_layer_norm")),
        Arch("bitnet", _bitnet, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("davit", _DaVit, _images, _class_loss,
             {"attention": "backbone.blocks.0.0.spatial_block.window_attn.qkv",
              "mlp": "backbone.blocks.0.0.channel_block.ffn.fc1",
              "embedding": "backbone.convs.0.conv",
              "norm": "backbone.blocks.0.0.channel_block.norm2"}),
        Arch("sew", _sew, _waves, _class_loss,
             _lm_sites("sew.encoder.layers", "attention.q_proj", "feed_forward.intermediate_dense",
                       "sew.feature_projection", "layer_norm")),
        Arch("yolos", _Yolos, _images, _class_loss,
             _lm_sites("yolos.encoder.layer", "attention.attention.query", "intermediate.dense",
                       "yolos.embeddings.patch_embeddings.projection", "layernorm_after")),
        # Rotation 28's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Gemma 2, whose layer 0 is a
        # sliding-window one: q_proj; MobileBERT: the query, which reads the shared query-key
        # bottleneck, as BERT's query; Pixtral: q_proj, as ViT's; WavTokenizer's Vocos decoder,
        # whose one attention sits in its positional net: that attention's query convolution;
        # TimeSformer, whose every layer runs a temporal attention and then a spatial one: the
        # temporal attention's fused qkv, the first the layer runs, as DaViT's spatial layer's),
        # layer 1's first MLP projection (Gemma 2, GeGLU: up_proj, as Gemma's; MobileBERT, whose
        # layers stack MLPs: the first one's intermediate dense; Pixtral, SwiGLU: up_proj, as
        # Gemma's; Vocos, whose layers are ConvNeXt blocks: block 1's pwconv1, as ConvNeXt's
        # first pointwise Linear; TimeSformer: intermediate.dense, as ViT's), the token (patch)
        # embedding the model calls (Gemma 2: the scaled token embeddings; MobileBERT: its 32-wide
        # word embeddings, as ELECTRA's; Pixtral and TimeSformer: the patch convolution; Vocos,
        # which reads spectrogram frames: its first convolution, the one that makes each frame
        # its token, as Speech2Text's subsampler), layer 1's pre-MLP norm (Gemma 2, whose MLP has
        # a norm on either side: pre_feedforward_layernorm; MobileBERT, post-norm: the NoNorm
        # between attention and the MLPs, as BERT's; Pixtral: ffn_norm; Vocos: block 1's
        # adaptive LayerNorm; TimeSformer: layernorm_after, as ViT's). No BatchNorm in any of
        # the five.
        Arch("gemma2", _gemma2, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "pre_feedforward_layernorm")),
        Arch("mobilebert", _mobilebert, _tokens, _masked_loss,
             _lm_sites("mobilebert.encoder.layer", "attention.self.query",
                       "ffn.0.intermediate.dense", "mobilebert.embeddings.word_embeddings",
                       "attention.output.LayerNorm")),
        Arch("pixtral", _Pixtral, _images, _class_loss,
             _lm_sites("encoder.transformer.layers", "attention.q_proj", "feed_forward.up_proj",
                       "encoder.patch_conv", "ffn_norm")),
        Arch("wavtokenizer", _WavTokenizer, _spectra, _vocoder_loss,
             {"attention": "backbone.pos_net.2.q",
              "mlp": "backbone.convnext.1.pwconv1",
              "embedding": "backbone.embed",
              "norm": "backbone.convnext.1.norm"}),
        Arch("timesformer", _timesformer, _clips, _class_loss,
             {"attention": "timesformer.encoder.layer.0.temporal_attention.attention.qkv",
              "mlp": "timesformer.encoder.layer.1.intermediate.dense",
              "embedding": "timesformer.embeddings.patch_embeddings.projection",
              "norm": "timesformer.encoder.layer.1.layernorm_after"}),
        # Rotation 29's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Apertus: q_proj, whose output its
        # per-head QK-norm reads, as OLMo 2's; NomicBERT: q_proj; MLCD: q_proj, the first its
        # attention runs (it builds k_proj first), as SigLIP's; PE-Audio: the encoder's q_proj;
        # TimesFM 2.5: q_proj, as TimesFM's), layer 1's first MLP projection (Apertus, whose MLP is
        # ungated: up_proj, its one input projection; NomicBERT, SwiGLU: up_proj, as Gemma's; MLCD:
        # fc1, as SigLIP's; PE-Audio, SwiGLU: up_proj; TimesFM 2.5, ungated: fc1, as TimesFM's first
        # projection), the token (patch) embedding the model calls (Apertus: the token embeddings;
        # NomicBERT: the word embeddings, as BERT's; MLCD: the patch convolution; PE-Audio, whose
        # codec encoder runs frozen under no_grad: data_proj, the Linear that makes each codec frame
        # a token, as Wav2Vec2's feature projection; TimesFM 2.5: input_ff_layer, the residual block
        # that makes each patch a token, as TimesFM's), layer 1's pre-MLP norm (Apertus:
        # feedforward_layernorm; NomicBERT, post-norm: post_attention_layernorm, the LayerNorm
        # between attention and MLP, as BERT's; MLCD: layer_norm2, as SigLIP's; PE-Audio:
        # post_attention_layernorm; TimesFM 2.5, whose MLP has a norm on either side:
        # pre_feedforward_layernorm, as Gemma 2's). No BatchNorm in any of the five (PE-Audio's
        # GroupNorms have one group: each sees one wave).
        Arch("apertus", _apertus, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "feedforward_layernorm")),
        Arch("nomicbert", _nomic_bert, _tokens, _masked_loss,
             _lm_sites("nomic_bert.layers", "self_attn.q_proj", "mlp.up_proj",
                       "nomic_bert.embeddings.word_embeddings", "post_attention_layernorm")),
        Arch("mlcd", _Mlcd, _images, _class_loss,
             _lm_sites("vision.encoder.layers", "self_attn.q_proj", "mlp.fc1",
                       "vision.embeddings.patch_embedding", "layer_norm2")),
        Arch("peaudio", _PeAudio, _waves, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "mlp.up_proj",
                       "encoder.embedder.data_proj", "post_attention_layernorm")),
        Arch("timesfm25", _timesfm2_5, _series, _timesfm_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.fc1", "model.input_ff_layer",
                       "pre_feedforward_layernorm")),
        # Rotation 30's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Nemotron: q_proj; X-MOD: the query, as
        # BERT's; Kimi Linear, whose layer 0 is a Kimi Delta Attention layer: its q_proj, the query
        # projection in front of the short convolution and the delta rule, as xLSTM's q), layer 1's
        # first MLP projection (Nemotron, ungated: up_proj, its one input projection, as Apertus's;
        # X-MOD: intermediate.dense, as BERT's, its language adapter coming after the MLP; Kimi
        # Linear, whose layer 1 is a mixture of experts beside a shared expert: the shared expert's
        # up_proj, as DeepSeek-V3's), the token embedding the model calls (Nemotron and Kimi
        # Linear: the token embeddings; X-MOD: the word embeddings, as BERT's), layer 1's pre-MLP
        # norm (Nemotron: post_attention_layernorm, a LayerNorm1P; X-MOD, post-norm: the norm
        # between attention and MLP, as BERT's; Kimi Linear: post_attention_layernorm, as
        # DeepSeek-V3's); for PP-LCNetV4, whose first stage has one block, as PP-LCNet's: the
        # stem's (first) convolution (stem1, as HGNetV2's), the second block's first convolution
        # (stage 1's first block's depthwise token convolution), the first convolution of the
        # first block of the next stage (stage 2's first block's token convolution), and the
        # `conv` convolution's BatchNorm; for VibeVoice's encoder (a convnet, no attention), whose
        # first stage is the ConvNeXt blocks after its stem convolution, as ConvNeXt's: the stem's
        # convolution, the second block's first convolution (the depthwise convolution of stage
        # 0's second block), the first convolution of the next stage (the strided convolution that
        # opens stage 1: its first block's depthwise convolution, the rule's, has a 3-d weight of
        # one input channel, which the lane fault, reading a 3-d weight's rows at their second
        # axis as fused experts', cannot strike), and the `conv` convolution's norm (the RMS norm
        # in front of it, as PoolFormer's GroupNorm). PP-LCNetV4 has BatchNorm throughout; none of
        # the others has any.
        Arch("nemotron", _nemotron, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("xmod", _xmod, _tokens, _masked_loss,
             _lm_sites("roberta.encoder.layer", "attention.self.query", "intermediate.dense",
                       "roberta.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("pplcnetv4", _PPLCNetV4, _images, _class_loss,
             {"conv": "backbone.encoder.blocks.1.blocks.0.token_conv.convolution",
              "conv-late": "backbone.encoder.blocks.2.blocks.0.token_conv.convolution",
              "stem": "backbone.encoder.convolution.stem1.convolution",
              "norm": "backbone.encoder.blocks.1.blocks.0.token_conv.normalization"},
             batchnorm=True),
        Arch("vibevoice", _VibeVoice, _waves, _class_loss,
             {"conv": "encoder.stem.stage.1.mixer.conv",
              "conv-late": "encoder.conv_layers.0.conv.conv",
              "stem": "encoder.stem.conv.conv",
              "norm": "encoder.stem.stage.1.norm"}),
        Arch("kimilinear", _kimi_linear, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.shared_experts.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        # Rotation 31's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (StableLM 2, Llama 4: q_proj;
        # Longformer: its local attention's query, as BERT's (the global query goes unused);
        # Pix2Struct: the query, as T5's q; Moonshine Streaming: the encoder's q_proj, as
        # Moonshine's), layer 1's first MLP projection (StableLM 2, SwiGLU: up_proj, as Gemma's;
        # Llama 4, whose layer 1 is a mixture of experts beside a shared expert: the shared
        # expert's up_proj, as DeepSeek-V3's; Longformer: intermediate.dense, as BERT's;
        # Pix2Struct, gated-GELU: wi_1, the linear branch, as LongT5's; Moonshine Streaming: fc1,
        # as Moonshine's), the token (patch) embedding the model calls (StableLM 2, Llama 4: the
        # token embeddings; Longformer: the word embeddings, as BERT's; Pix2Struct: the patch
        # projection, a Linear on each flattened patch, as ViT's patch convolution; Moonshine
        # Streaming, which reads waveforms: the Linear that makes each 5 ms frame a vector, its
        # stem's convolutions after it returning their outputs with their masks, pairs, which the
        # compute fault cannot scale), layer 1's pre-MLP norm (StableLM 2, parallel: the one
        # LayerNorm both branches read, input_layernorm, as Falcon's; Llama 4:
        # post_attention_layernorm, as Mixtral's; Longformer, post-norm: the norm between
        # attention and MLP, as BERT's; Pix2Struct: pre_mlp_layer_norm, an RMS norm; Moonshine
        # Streaming: post_attention_layernorm, a LayerNorm of gain 1 + weight, as Moonshine's). No
        # BatchNorm in any of the five.
        Arch("stablelm", _stablelm, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "input_layernorm")),
        Arch("longformer", _longformer, _tokens, _masked_loss,
             _lm_sites("longformer.encoder.layer", "attention.self.query", "intermediate.dense",
                       "longformer.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("pix2struct", _Pix2Struct, _images, _class_loss,
             _lm_sites("backbone.encoder.layer", "attention.query", "mlp.wi_1",
                       "backbone.embeddings.patch_projection", "pre_mlp_layer_norm")),
        Arch("moonshinestream", _MoonshineStreaming, _waves, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "mlp.fc1", "encoder.embedder.linear",
                       "post_attention_layernorm")),
        Arch("llama4", _llama4, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "feed_forward.shared_expert.up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        # Rotation 32's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (GLM-4, EuroBERT: q_proj; DBRX: its
        # fused Wqkv, whose outputs its clamp reads, as Falcon's query_key_value; ImageGPT: its
        # fused c_attn, as GPT-2's; SpeechT5: the encoder's q_proj, as Wav2Vec2's), layer 1's
        # first MLP projection (GLM-4, whose gate and up projections are one Linear: that
        # gate_up_proj, its one input projection; DBRX, a mixture of experts with no shared
        # expert: its experts, as Mixtral's, the lane fault on their up weights v1, whose rows
        # stack expert after expert, so it strikes one row of one expert; EuroBERT, SwiGLU:
        # up_proj, as Gemma's; ImageGPT: c_fc, as GPT-2's; SpeechT5: intermediate_dense, as
        # Wav2Vec2's), the token embedding the model calls (GLM-4, DBRX, EuroBERT: the token
        # embeddings; ImageGPT, which reads colour-cluster indices: their embeddings, wte, as
        # GPT-2's; SpeechT5, which reads waveforms: the feature projection's Linear that turns
        # conv frames into tokens, as Wav2Vec2's), layer 1's pre-MLP norm (GLM-4, whose MLP has
        # a norm on either side: post_attention_layernorm, the one in front, as Gemma 2's
        # pre_feedforward_layernorm; DBRX: norm_2, the bias-free LayerNorm its attention block
        # ends with; EuroBERT: post_attention_layernorm; ImageGPT: ln_2, its uncentred norm;
        # SpeechT5, post-norm: layer_norm, between attention and MLP, as Wav2Vec2's). No
        # BatchNorm in any of the five (SpeechT5's one GroupNorm has a group per channel of one
        # wave's first convolution).
        Arch("glm4", _glm4, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.gate_up_proj",
                       "model.embed_tokens", "post_attention_layernorm")),
        Arch("dbrx", _dbrx, _tokens, _causal_loss,
             _lm_sites("transformer.blocks", "norm_attn_norm.attn.Wqkv", "ffn.experts",
                       "transformer.wte", "norm_attn_norm.norm_2"),
             lane_weight="mlp.v1"),
        Arch("eurobert", _eurobert, _tokens, _masked_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("imagegpt", _ImageGpt, _images, _class_loss,
             _lm_sites("gpt.transformer.h", "attn.c_attn", "mlp.c_fc", "gpt.transformer.wte",
                       "ln_2")),
        Arch("speecht5", _SpeechT5, _waves, _class_loss,
             _lm_sites("encoder.wrapped_encoder.layers", "attention.q_proj",
                       "feed_forward.intermediate_dense",
                       "encoder.prenet.feature_projection.projection", "layer_norm")),
        # Rotation 33's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (EXAONE 4.0, whose layer 0 is a local
        # one: q_proj, whose output its per-head QK-norm reads, as OLMo 2's; XLM: the query
        # projection q_lin, as BERT's query; X-CLIP, whose layers run a message attention over
        # the frames' message tokens before each frame's own attention: that own attention's
        # q_proj, which reads every patch, as CLIP's (SigLIP's); RADIO: q_proj, as ViT's; CLAP's
        # audio encoder: the query of stage 0's first block, as Swin's), layer 1's first MLP
        # projection (EXAONE 4.0, SwiGLU: up_proj, as Gemma's; XLM, whose layers keep each
        # sublayer in a list of its own: ffns.1's lin1; X-CLIP, RADIO: fc1, as SigLIP's; CLAP's
        # audio encoder: intermediate.dense of stage 0's second block, as Swin's fc1), the token
        # (patch) embedding the model calls (EXAONE 4.0, XLM: the token embeddings; X-CLIP: the
        # patch convolution, as SigLIP's; RADIO: the bias-free Linear on each flattened patch, as
        # Pix2Struct's patch projection; CLAP's audio encoder: the patch convolution, as Swin's),
        # layer 1's pre-MLP norm (EXAONE 4.0, which has no norm in front of its sublayers:
        # post_attention_layernorm, the norm on the attention's output, the one between attention
        # and MLP, as BERT's post-norm one; XLM, post-norm: layer_norm1.1, between attention and
        # MLP, as BERT's; X-CLIP: layer_norm2, as SigLIP's; RADIO: norm2; CLAP's audio encoder:
        # layernorm_after of stage 0's second block, as Swin's). BatchNorm in one of the five:
        # CLAP's audio encoder normalizes its input's mel bins with one.
        Arch("exaone4", _exaone4, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("xlm", _Xlm, _tokens, _masked_loss,
             {"attention": "xlm.transformer.attentions.0.q_lin",
              "mlp": "xlm.transformer.ffns.1.lin1",
              "embedding": "xlm.transformer.embeddings",
              "norm": "xlm.transformer.layer_norm1.1"}),
        Arch("xclip", _XClipVision, _clips, _class_loss,
             _lm_sites("vision.encoder.layers", "self_attn.q_proj", "mlp.fc1",
                       "vision.embeddings.patch_embedding", "layer_norm2")),
        Arch("radio", _Radio, _images, _class_loss,
             _lm_sites("radio.encoder.layer", "attention.q_proj", "mlp.fc1",
                       "radio.embeddings.patch_projection", "norm2")),
        Arch("clap", _ClapAudio, _mel_maps, _class_loss,
             _lm_sites("clap.audio_encoder.layers.0.blocks", "attention.self.query",
                       "intermediate.dense", "clap.audio_encoder.patch_embed.proj",
                       "layernorm_after"),
             batchnorm=True),
        # Rotation 34's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Arcee: q_proj, as Llama-style LMs';
        # RemBERT: the query, as BERT's; GroupViT, whose first stage's layers attend over the
        # patches and the group tokens together: the q_proj of that stage's layer 0, as CLIP's;
        # Granite Speech: to_q, the queries' own Linear, keys and values sharing to_kv), layer 1's
        # first MLP projection (Arcee, ungated squared ReLU: up_proj; RemBERT: intermediate.dense,
        # as BERT's; GroupViT: fc1 of the first stage's layer 1, not the grouping block's MLPs;
        # Granite Speech: the first half-step feed-forward's up_proj, as Parakeet's), the token
        # (patch, frame) embedding the model calls (Arcee: embed_tokens; RemBERT: the small word
        # embeddings, ahead of the Linear that lifts them; GroupViT: the patch convolution;
        # Granite Speech: input_linear, the Linear on each frame, as Parakeet's subsampling
        # Linear), layer 1's pre-MLP norm (Arcee: post_attention_layernorm; RemBERT, post-norm:
        # attention.output's LayerNorm, as BERT's; GroupViT: layer_norm2 of the first stage's
        # layer 1; Granite Speech: the first feed-forward's pre_norm, as Parakeet's
        # norm_feed_forward1); for Chameleon's VQ-GAN encoder (a convnet with attention only at
        # its lowest resolution: sites as a convnet's), the stem's convolution conv_in, the
        # second block's first convolution (stage 0's second residual block's conv1), the first
        # convolution of the first block of the next stage (stage 1's), and the `conv`
        # convolution's GroupNorm (norm2, on that conv1's output, as BiT's). BatchNorm in one of
        # the five: Granite Speech's convolution modules.
        Arch("arcee", _arcee, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("rembert", _rembert, _tokens, _masked_loss,
             _lm_sites("rembert.encoder.layer", "attention.self.query", "intermediate.dense",
                       "rembert.embeddings.word_embeddings", "attention.output.LayerNorm")),
        Arch("groupvit", _GroupVit, _images, _class_loss,
             _lm_sites("vision.vision_model.encoder.stages.0.layers", "self_attn.q_proj",
                       "mlp.fc1", "vision.vision_model.embeddings.patch_embeddings.projection",
                       "layer_norm2")),
        Arch("chameleon", _ChameleonVq, _images, _class_loss,
             {"conv": "encoder.down.0.block.1.conv1",
              "conv-late": "encoder.down.1.block.0.conv1",
              "stem": "encoder.conv_in",
              "norm": "encoder.down.0.block.1.norm2"}),
        Arch("granitespeech", _GraniteSpeech, _mel_maps, _class_loss,
             _lm_sites("encoder.layers", "attn.to_q", "ff1.up_proj", "encoder.input_linear",
                       "ff1.pre_norm"),
             batchnorm=True),
        # Rotation 35's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (MPT: the fused Wqkv, as GPT-2's
        # c_attn; XGLM, CLVP, InternViT, Phi-4's audio encoder: q_proj), layer 1's first MLP
        # projection (MPT: up_proj; XGLM: fc1, as BART's; CLVP, GELU-gated: fc1's proj, both
        # halves in one Linear; InternViT: fc1; Phi-4's audio encoder: the first half-step
        # feed-forward's gate_up_proj, as Parakeet's first feed-forward), the token (patch,
        # frame) embedding the model calls (MPT: wte; XGLM: embed_tokens, before its scale;
        # CLVP: token_embedding; InternViT: the patch convolution; Phi-4's audio encoder:
        # embed.out, the subsampling's Linear, as Parakeet's), layer 1's pre-MLP norm (MPT:
        # norm_2; XGLM: final_layer_norm, as BART's; CLVP: post_attention_rmsnorm; InternViT:
        # layernorm_after, an RMS norm; Phi-4's audio encoder: the first feed-forward's
        # layer_norm, as Parakeet's norm_feed_forward1). BatchNorm in none of the five.
        Arch("mpt", _mpt, _tokens, _causal_loss,
             _lm_sites("transformer.blocks", "attn.Wqkv", "ffn.up_proj", "transformer.wte",
                       "norm_2")),
        Arch("xglm", _xglm, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "fc1", "model.embed_tokens",
                       "final_layer_norm")),
        Arch("clvp", _ClvpText, _tokens, _masked_loss,
             _lm_sites("clvp.layers", "self_attn.q_proj", "mlp.fc1.proj", "clvp.token_embedding",
                       "post_attention_rmsnorm")),
        Arch("internvl", _InternVit, _images, _class_loss,
             _lm_sites("vision.encoder.layer", "attention.q_proj", "mlp.fc1",
                       "vision.embeddings.patch_embeddings.projection", "layernorm_after")),
        Arch("phi4audio", _Phi4Audio, _mel_frames, _class_loss,
             _lm_sites("encoder.encoders", "self_attn.q_proj", "feed_forward_in.gate_up_proj",
                       "encoder.embed.out", "feed_forward_in.layer_norm")),
        # Rotation 36's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (SmolLM3, whose layer 0 rotates its
        # queries and keys, layer 1 being NoPE: q_proj; nanochat: q_proj, whose output is rotated
        # and then QK-normed; GTE: q_proj, as BERT's query; BLIP's vision encoder: the fused qkv,
        # as GPT-2's c_attn; Fun-ASR's SAN-M encoder: q_proj), layer 1's first MLP projection
        # (SmolLM3, SwiGLU, and GTE, gated-GELU: up_proj, the linear branch, as Gemma's; nanochat,
        # ungated squared ReLU: fc1, its one input projection, as Arcee's up_proj; BLIP's vision
        # encoder, Fun-ASR's encoder: fc1), the token (patch, frame) embedding the model calls
        # (SmolLM3, nanochat: embed_tokens, nanochat's before its weightless norm; GTE: the word
        # embeddings, as BERT's; BLIP's vision encoder: the patch convolution; Fun-ASR's encoder,
        # which has no embedding, its stacked frames going straight into layer 0, whose attention
        # has no residual around it: layer 0's v_proj, the Linear whose output the memory block
        # adds back, the one path that carries each stacked frame on as its token, as Wav2Vec2's
        # feature projection), layer 1's pre-MLP norm (SmolLM3: post_attention_layernorm;
        # nanochat: post_attention_layernorm, a weightless RMS norm, as HRM-Text's; GTE,
        # post-norm: post_attention_layernorm, between attention and MLP, as BERT's; BLIP's
        # vision encoder: layer_norm2, as SigLIP's; Fun-ASR's encoder: post_attention_layernorm).
        # BatchNorm in none of the five.
        Arch("smollm3", _smollm3, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("nanochat", _nanochat, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.fc1", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("gte", _gte, _tokens, _masked_loss,
             _lm_sites("gte.layers", "self_attn.q_proj", "mlp.up_proj",
                       "gte.embeddings.word_embeddings", "post_attention_layernorm")),
        Arch("blip", _BlipVision, _images, _class_loss,
             _lm_sites("vision.encoder.layers", "self_attn.qkv", "mlp.fc1",
                       "vision.embeddings.patch_embedding", "layer_norm2")),
        Arch("funasr", _FunAsr, _mel_frames, _class_loss,
             {"attention": "encoder.layers.0.self_attn.q_proj",
              "mlp": "encoder.layers.1.mlp.fc1",
              "embedding": "encoder.layers.0.self_attn.v_proj",
              "norm": "encoder.layers.1.post_attention_layernorm"}),
        # Rotation 37's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (MiniCPM3, whose queries pass through a
        # latent: q_a_proj, the query projection that reads the layer's normed input, as
        # DeepSeek-V3's; MiMo-V2-Flash, whose layer 0 is a full-attention one: q_proj; VITS's text
        # encoder: q_proj; Llama 3.2 Vision's image encoder: layer 0 of its local encoder, q_proj;
        # LiLT: the text stream's query, as BERT's, the layout stream's layout_query beside it),
        # layer 1's first MLP projection (MiniCPM3, SwiGLU: up_proj, as Gemma's; MiMo-V2-Flash,
        # whose layer 1 is a mixture of experts without a shared expert: the experts, their fused
        # gate_up_proj the lane weight, as Mixtral's; VITS's text encoder, whose feed-forward is
        # convolutional: conv_1, its first 3-wide convolution, whose 3-d kernel the lane fault
        # reads at its second axis, input channel 3 of every filter, as SqueezeBERT's conv1d;
        # Llama 3.2 Vision's image encoder: the local encoder's layer 1 fc1; LiLT: the text
        # stream's intermediate.dense, as BERT's), the token (patch) embedding the model calls
        # (MiniCPM3: embed_tokens, its x12 scale inside it; MiMo-V2-Flash: embed_tokens; VITS's
        # text encoder: embed_tokens, before its scale by the root of the width; Llama 3.2
        # Vision's image encoder: the patch convolution, which every tile goes through; LiLT: the
        # text stream's word embeddings, as BERT's), layer 1's pre-MLP norm (MiniCPM3,
        # MiMo-V2-Flash: post_attention_layernorm; VITS's text encoder, post-norm: layer_norm,
        # between attention and feed-forward, as BERT's; Llama 3.2 Vision's image encoder: the
        # local encoder's layer 1 post_attention_layernorm; LiLT, post-norm: the text stream's
        # attention.output.LayerNorm, as BERT's). BatchNorm in none of the five.
        Arch("minicpm3", _minicpm3, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_a_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("mimo", _mimo, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.experts", "model.embed_tokens",
                       "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("vits", _VitsText, _tokens, _masked_loss,
             _lm_sites("text.encoder.layers", "attention.q_proj", "feed_forward.conv_1",
                       "text.embed_tokens", "layer_norm")),
        Arch("mllama", _MllamaVision, _images, _class_loss,
             _lm_sites("vision.transformer.layers", "self_attn.q_proj", "mlp.fc1",
                       "vision.patch_embedding", "post_attention_layernorm")),
        Arch("lilt", _Lilt, _tokens, _masked_loss,
             _lm_sites("lilt.encoder.layer", "attention.self.query", "intermediate.dense",
                       "lilt.embeddings.word_embeddings", "attention.output.LayerNorm")),
        # Rotation 38's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (ZAYA1, whose queries and keys go through
        # CCA's convolutions: the CCA projection's q_proj, the query projection that reads the
        # layer's normed input, ahead of them, as DeepSeek-V3's q_a_proj; Dory: q_proj, whose output
        # is L2-normed per head; NeoMME: q_proj, whose output is RMS-normed per head and then
        # rotated; SAM 3's image encoder: q_proj of layer 0, a windowed one; Voxtral Realtime's
        # encoder: q_proj, as Whisper's), layer 1's first MLP projection (ZAYA1, whose every layer
        # is a mixture of experts: the experts, their fused gate_up_proj the lane weight, as
        # Mixtral's; Dory, SwiGLU: up_proj of its recurrent layer, struck at both of its passes, as
        # ALBERT's shared layer; NeoMME, ungated squared ReLU: up_proj, its one input projection,
        # as Arcee's; SAM 3's image encoder: fc1 of layer 1, a global one; Voxtral Realtime's
        # encoder, SwiGLU: up_proj, as Gemma's), the token (patch, frame) embedding the model calls
        # (ZAYA1, Dory: embed_tokens; NeoMME, factorized: the 32-wide word embeddings, ahead of the
        # Linear that lifts them, as RemBERT's; SAM 3's image encoder: the patch convolution;
        # Voxtral Realtime's encoder, which reads log-mel frames: its stem's second, strided
        # convolution, the one that makes the tokens, as Whisper's conv2), layer 1's pre-MLP norm
        # (ZAYA1: post_attention_layernorm, in front of the experts, as Mixtral's; Dory, whose MLP
        # has a norm on either side: pre_feedforward_layernorm, the weightless L2 norm in front, as
        # Gemma 2's; NeoMME: post_attention_layernorm, a weightless RMS norm, as nanochat's; SAM 3's
        # image encoder: layer_norm2, as SigLIP's; Voxtral Realtime's encoder: final_layer_norm, an
        # RMS norm, as Whisper's). BatchNorm in none of the five.
        Arch("zaya", _zaya, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.qkv_proj.q_proj", "mlp.experts",
                       "model.embed_tokens", "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("dory", _dory, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "pre_feedforward_layernorm")),
        Arch("neomme", _neomme, _tokens, _masked_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj",
                       "model.embed_tokens.word_embeddings", "post_attention_layernorm")),
        Arch("sam3", _Sam3Vit, _images, _class_loss,
             _lm_sites("vision.layers", "attention.q_proj", "mlp.fc1",
                       "vision.embeddings.patch_embeddings.projection", "layer_norm2")),
        Arch("voxtral", _VoxtralRealtime, _mels, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "mlp.up_proj",
                       "encoder.embedder.conv2", "final_layer_norm")),
        # Rotation 39's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Laguna: q_proj, whose output is
        # RMS-normed per head and then rotated, beside the g_proj that gates the heads; ESM C:
        # q_proj, whose output is LayerNormed over its whole width; Inkling: q_proj, whose output is
        # RMS-normed per head, beside the r_proj that reads the relative states; Sapiens 2's
        # backbone: q_proj of layer 0, a full multi-head one; Nemotron Speech Streaming's encoder:
        # q_proj, as Parakeet's), layer 1's first MLP projection (Laguna, whose layer 1 is a mixture
        # of experts: the experts, their fused gate_up_proj the lane weight, as Mixtral's; ESM C,
        # SwiGLU: up_proj, as Gemma's; Inkling, all of whose MLPs are mixtures of experts: the
        # routed experts, their fused gate_up_proj the lane weight, as Laguna's; Sapiens 2's
        # backbone, SwiGLU: up_proj of layer 1, a grouped-query one; Nemotron Speech Streaming's
        # encoder: the first feed-forward's linear1, as Parakeet's), the token (patch, frame)
        # embedding the model calls (Laguna, ESM C: embed_tokens; Inkling: embed_tokens, whose
        # output is the normed embedding; Sapiens 2's backbone: the patch convolution; Nemotron
        # Speech Streaming's encoder, which reads log-mel frames: the subsampling's Linear that
        # makes the tokens, as Parakeet's), layer 1's pre-MLP norm (Laguna:
        # post_attention_layernorm, in front of the experts, as Mixtral's; ESM C:
        # post_attention_layernorm, a LayerNorm; Inkling: post_attention_layernorm, in front of the
        # experts; Sapiens 2's backbone: norm2, an RMS norm, as DINOv2's; Nemotron Speech
        # Streaming's encoder: norm_feed_forward1, in front of the first feed-forward, as
        # Parakeet's). BatchNorm in none of the five.
        Arch("laguna", _laguna, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.experts", "model.embed_tokens",
                       "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("esmc", _esmc, _tokens, _masked_loss,
             _lm_sites("esmc.layers", "self_attn.q_proj", "mlp.up_proj", "esmc.embed_tokens",
                       "post_attention_layernorm")),
        Arch("inkling", _inkling, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.experts", "model.embed_tokens",
                       "post_attention_layernorm"),
             lane_weight="gate_up_proj"),
        Arch("sapiens2", _Sapiens2Vit, _images, _class_loss,
             _lm_sites("vision.model.layer", "attention.q_proj", "mlp.up_proj",
                       "vision.embeddings.patch_embeddings", "norm2")),
        Arch("nemotronasr", _NemotronAsrStreaming, _mel_frames, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "feed_forward1.linear1",
                       "encoder.subsampling.linear", "norm_feed_forward1")),
        # Rotation 40's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (Ergo: its fused qkv_proj, as
        # CodeGen's, whose query and key heads are then RMS-normed; UltraBERT: q_proj of layer 0,
        # a windowed one; PVTv2-Li: the query of stage 0's block 0, the one Linear that reads the
        # full map; Qwen3-ASR's encoder: q_proj, as Whisper's), layer 1's first MLP projection
        # (Ergo, whose layer 1 is a mixture of experts: the always-on shared expert's up_proj, as
        # Qwen2-MoE's, its routed experts' stacked projections naming no output channel;
        # UltraBERT, SwiGLU: up_proj, as EuroBERT's; PVTv2-Li: dense1 of stage 0's block 1, in
        # front of the ReLU and the depthwise convolution; Qwen3-ASR's encoder: fc1, as
        # Whisper's), the token (patch, frame) embedding the model calls (Ergo,
        # UltraBERT: embed_tokens; PVTv2-Li: stage 0's overlapping patch convolution; Qwen3-ASR's
        # encoder, which reads log-mel frames: conv_out, the Linear that makes each chunk's
        # tokens), layer 1's pre-MLP norm (Ergo: pre_feedforward_layernorm, in front of the
        # experts, post_attention_layernorm being the attention branch's output norm; UltraBERT:
        # post_attention_layernorm; PVTv2-Li: layer_norm_2 of stage 0's block 1, as PVT's;
        # Qwen3-ASR's encoder: final_layer_norm, as Whisper's). DINOv3's ConvNeXt, a
        # convolutional net, by the convolutional rule, as ConvNeXt's: stage 0's second depthwise
        # convolution, stage 1's first (the lane weight), the stem convolution and stage 0's second
        # block's LayerNorm. BatchNorm in none of the five.
        Arch("ergo", _ergo, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.qkv_proj", "mlp.shared_experts.up_proj",
                       "model.embed_tokens", "pre_feedforward_layernorm")),
        Arch("ultrabert", _ultrabert, _tokens, _masked_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.up_proj", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("pvtv2", _pvt_v2, _images, _class_loss,
             _lm_sites("pvt_v2.encoder.layers.0.blocks", "attention.query", "mlp.dense1",
                       "pvt_v2.encoder.layers.0.patch_embedding.proj", "layer_norm_2")),
        Arch("dinov3convnext", _Dinov3ConvNext, _images, _class_loss,
             {"conv": "convnext.model.stages.0.layers.1.depthwise_conv",
              "conv-late": "convnext.model.stages.1.layers.0.depthwise_conv",
              "stem": "convnext.model.stages.0.downsample_layers.0",
              "norm": "convnext.model.stages.0.layers.1.layer_norm"}),
        Arch("qwen3asr", _Qwen3AsrEncoder, _mels, _class_loss,
             _lm_sites("encoder.layers", "self_attn.q_proj", "fc1", "encoder.conv_out",
                       "final_layer_norm")),
        # Rotation 41's held-out architectures, sites by the same rule, written down before any of
        # their runs: layer 0's attention input projection (StarCoder2, BioGPT, HuBERT: q_proj;
        # DistilBERT: q_lin; I-JEPA: q_proj, as ViT's), layer 1's first MLP projection
        # (StarCoder2: c_fc, as GPT-2's; DistilBERT: ffn.lin1; I-JEPA: mlp.fc1; HuBERT:
        # feed_forward.intermediate_dense, as Wav2Vec2's; BioGPT: fc1, as OPT's), the token
        # (patch, frame) embedding the model calls (StarCoder2: embed_tokens; DistilBERT:
        # word_embeddings; I-JEPA: the patch convolution; HuBERT, which reads waveforms: the
        # feature projection, as Wav2Vec2's; BioGPT: embed_tokens), layer 1's pre-MLP norm
        # (StarCoder2: post_attention_layernorm; DistilBERT, post-norm: sa_layer_norm, after the
        # attention's residual add and in front of the MLP; I-JEPA: layernorm_after; HuBERT, pre-
        # norm: final_layer_norm, the layer's own; BioGPT: final_layer_norm, as OPT's). BatchNorm in
        # none of the five.
        Arch("starcoder2", _starcoder2, _tokens, _causal_loss,
             _lm_sites("model.layers", "self_attn.q_proj", "mlp.c_fc", "model.embed_tokens",
                       "post_attention_layernorm")),
        Arch("distilbert", _distilbert, _tokens, _masked_loss,
             _lm_sites("distilbert.transformer.layer", "attention.q_lin", "ffn.lin1",
                       "distilbert.embeddings.word_embeddings", "sa_layer_norm")),
        Arch("ijepa", _ijepa, _images, _class_loss,
             _lm_sites("ijepa.layers", "attention.q_proj", "mlp.fc1",
                       "ijepa.embeddings.patch_embeddings.projection", "layernorm_after")),
        Arch("hubert", _hubert, _waves, _class_loss,
             _lm_sites("hubert.encoder.layers", "attention.q_proj",
                       "feed_forward.intermediate_dense", "hubert.feature_projection.projection",
                       "final_layer_norm")),
        Arch("biogpt", _biogpt, _tokens, _causal_loss,
             _lm_sites("biogpt.layers", "self_attn.q_proj", "fc1", "biogpt.embed_tokens",
                       "final_layer_norm")),
    )
}  # fmt: skip
