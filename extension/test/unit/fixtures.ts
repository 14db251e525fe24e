// A diagnosis as the engine emits it for a multi-rank NCCL timeout, used by several tests.
import type { DenpexDiagnosis } from "../../src/protocol/methods";

export function sampleDiagnosis(): DenpexDiagnosis {
  return {
    schema_version: 2,
    findings: [
      {
        id: "cuda-oom",
        title: "CUDA out of memory",
        category: "memory",
        confidence: 0.92,
        initiating_rank: 3,
        collateral_ranks: [0, 1, 2, 4, 5, 6, 7],
        suspect_ranks: [],
        host: "gpu-node-07.cluster.internal",
        gpu: 3,
        evidence: [
          {
            source: "/home/alice/runs/job.log",
            line: 120,
            text: "[rank3]: torch.OutOfMemoryError: CUDA out of memory. <script>alert(1)</script>",
            rank: 3,
            role: "initiating",
          },
          {
            source: "/home/alice/runs/job.log",
            line: 140,
            text: "[rank0]: Watchdog caught collective operation timeout",
            rank: 0,
            role: "collateral",
          },
        ],
        root_cause:
          "Rank 3 ran out of GPU memory on gpu-node-07 (10.2.3.4); the others timed out waiting.",
        fix: "Reduce the micro-batch size or enable activation checkpointing.",
        verification: [
          "nvidia-smi -q -d MEMORY -i 3",
          "echo \"$HF_TOKEN\" && grep -n 'OutOfMemory' job.log",
        ],
        related: ["nccl-timeout"],
        verification_runnable: [true, true],
        // The phrases finding.py adds (describe_initiator, compress_ranks).
        initiator: "rank 3 on gpu-node-07.cluster.internal, GPU 3",
        collateral_ranks_text: "0-2,4-7",
        suspect_ranks_text: "",
      },
    ],
  };
}
