import { test } from "node:test";
import assert from "node:assert/strict";
import { redact, hostsInText } from "../../src/core/redact";
import { diagnosisToMarkdown } from "../../src/core/markdown";
import { sampleDiagnosis } from "./fixtures";

test("tokens of the common kinds are removed", () => {
  const text = [
    "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "remote: ghp_0123456789abcdefghijABCDEFGHIJklmnop",
    "aws AKIAIOSFODNN7EXAMPLE key",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
    "WANDB_API_KEY: 0123456789abcdef0123",
  ].join("\n");
  const out = redact(text);
  assert.doesNotMatch(out, /hf_AbCd|ghp_0123|AKIAIOSFODNN7EXAMPLE|eyJhbGci|0123456789abcdef0123/);
  assert.match(out, /<hf-token>/);
  assert.match(out, /<github-token>/);
  assert.match(out, /<aws-key-id>/);
  assert.match(out, /Bearer <token>/);
  assert.match(out, /WANDB_API_KEY: <redacted>/);
});

test("IPv4 and IPv6 addresses go, timestamps and versions stay", () => {
  const out = redact("connect to 10.2.3.4:29500 and fe80::1ff:fe23:4567:890a at 12:34:56, torch 2.13.0, NCCL 2.21.5+cuda12.4");
  assert.equal(out, "connect to <ip>:29500 and <ip> at 12:34:56, torch 2.13.0, NCCL 2.21.5+cuda12.4");
});

test("user names in home paths and the local user name are replaced", () => {
  const out = redact("/home/alice/runs/job.log /Users/bob/x C:\\Users\\carol\\y by alice", { users: ["alice"] });
  assert.equal(out, "/home/<user>/runs/job.log /Users/<user>/x C:\\Users\\<user>\\y by <user>");
});

test("host names are replaced consistently, FQDN and short name alike", () => {
  const text = "gpu-node-07:1234:1234 [3] NCCL WARN oops\ngpu-node-08:99:99 [0] NCCL INFO ok\nrank 3 on gpu-node-07.cluster.internal; gpu-node-07 again";
  assert.deepEqual(hostsInText(text).sort(), ["gpu-node-07", "gpu-node-08"]);
  const out = redact(text, { hosts: ["gpu-node-07.cluster.internal"] });
  assert.equal(out, "host-1:1234:1234 [3] NCCL WARN oops\nhost-2:99:99 [0] NCCL INFO ok\nrank 3 on host-1; host-1 again");
});

test("file names that look like dotted names are not taken for hosts", () => {
  const out = redact("hostname=trainer-3 saved model.safetensors", {});
  assert.equal(out, "hostname=host-1 saved model.safetensors");
});

test("markdown export redacts by default-on setting and keeps the substance", () => {
  const md = diagnosisToMarkdown(sampleDiagnosis(), { redact: true });
  assert.match(md, /^# Denpex diagnosis/);
  assert.match(md, /\*\*Initiating:\*\* rank 3 on host-1, GPU 3/);
  assert.match(md, /\*\*Collateral ranks:\*\* 0-2, 4-7/);
  assert.match(md, /\/home\/<user>\/runs\/job\.log:120 \[initiating\]/);
  assert.doesNotMatch(md, /gpu-node-07|10\.2\.3\.4|alice/);
  assert.match(md, /nvidia-smi -q -d MEMORY -i 3/);
  assert.match(md, /redacted \(denpex\.privacy\.redactExports\)/);
});

test("markdown export without redaction keeps hosts, and fences survive backticks in log text", () => {
  const d = sampleDiagnosis();
  d.findings[0].evidence[0].text = "weird ``` fence";
  const md = diagnosisToMarkdown(d, { redact: false });
  assert.match(md, /gpu-node-07\.cluster\.internal/);
  assert.match(md, /````\n[^]*weird ``` fence[^]*\n````/);
  assert.doesNotMatch(md, /redacted/);
});
