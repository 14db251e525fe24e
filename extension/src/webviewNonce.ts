import { randomBytes } from "node:crypto";
import { makeNonce } from "./core/escape";

export function nonce(): string {
  return makeNonce((n) => randomBytes(n));
}
