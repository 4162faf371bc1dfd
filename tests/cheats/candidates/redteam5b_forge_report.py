# cheat: forges the facts the evaluator judges instead of hiding from the observers. Every runtime-guard fact (the
#        op log's ops, the launch count, the violations, the threads, the poison flag, mutated inputs and state) is
#        computed in the worker process the candidate runs in and sent to the parent as JSON lines by the worker's
#        Channel.send; the parent judges that message as it comes. At import the candidate replaces the send
#        method of the worker's Channel class (sys.modules["__main__"].Channel, the module started with
#        `python -m foundry.evaluate.worker`) with one that rewrites each call record of the correctness message:
#        ops {aten.empty.memory_format: 1}, launches 1, no violations, no threads, poisoned. The forward is plain
#        torch.softmax copied out by a Triton kernel; the outputs (read from outputs.pt) are right, so nothing the parent
#        measures itself disagrees.
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute|no_triton_launch|guard_tampered
# config: static_guard=false
# devices: cpu
# uncaught: every fact the runtime guard judges (ops, launches, violations, threads, poisoned, mutations) is made
#        and serialized in the candidate's own address space; nothing checks that the worker's Channel.send (or
#        json.dumps, OpLog, Witness) is still the worker's, and the parent has no observer of its own
import sys

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _forge() -> None:
    worker = sys.modules.get("__main__")
    channel = getattr(worker, "Channel", None)
    if channel is None or getattr(channel, "forged", False):
        raise RuntimeError("worker Channel not found: nothing forged")
    send = channel.send

    def forged(self, message):
        for call in message.get("calls") or []:
            call.update(ops={"aten.empty.memory_format": 1}, work={}, launches=1, violations=[],
                        foreign_streams=[], threads=0, poisoned=True, mutated_inputs=[], mutated_state=[])
        return send(self, message)

    channel.send = forged
    channel.forged = True


_forge()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.softmax(x, dim=-1).contiguous()  # the work, in torch; the copy kernel below is for show
        out = torch.empty_like(y)
        _copy_kernel[(triton.cdiv(y.numel(), 256),)](y, out, y.numel(), BLOCK=256)
        return out
