"""Checkpoint I/O: find a run's checkpoints and read their tensors, whatever saved them.

Pure input: nothing here judges drift. Every file is hostile (it comes from another
machine), so nothing is unpickled beyond ``torch.load(weights_only=True)`` and
``denpex.safepickle``, and every header, offset and size is checked before it is used.

- ``reader``: the ``Reader`` every format gives (tensor list, row blocks), ``TensorMeta``,
  ``CheckpointError`` and the ``preadv`` file access the formats share;
- one module per format: ``safetensors``, ``pt`` (torch zip or legacy files), ``dcp``
  (torch.distributed.checkpoint directories), ``sharded`` (HF index files, several shards
  as one reader);
- ``layouts``: which files of a checkpoint hold the weights (HF folders, DeepSpeed,
  Megatron, DCP) and ``open_checkpoint``;
- ``discover``: a run's checkpoints by step, and whether each is complete;
- ``keys``: one name per parameter across wrappers (DDP, torch.compile, training states).
"""

from denpex.checkpoints.discover import Checkpoint, find_checkpoints
from denpex.checkpoints.layouts import open_checkpoint
from denpex.checkpoints.reader import CheckpointError, Reader, TensorMeta

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "Reader",
    "TensorMeta",
    "find_checkpoints",
    "open_checkpoint",
]
