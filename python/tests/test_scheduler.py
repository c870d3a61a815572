# tbcheck.Scheduler, the stepping scheduler from Python: the docs' simulator loop places every block where
# and when predict() does, a block that fits nowhere waits for a retirement, and bad input is InputError.
import os
import re
from pathlib import Path

import pytest

import tbcheck

SOURCE = Path(os.environ.get("TBCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
# Several kernels, streams, releases, priorities, TPC masks and a 2-D grid between them.
CASES = [
    "corpus/paper/000-wang/case-4.2.json",
    "corpus/paper/002-olmedo/six-sms-occupied-2warp.json",
    "corpus/paper/003-pai/shape-3x4.json",
    "corpus/paper/amert-tx2/fig7-stream-priority-preemption.json",
    "corpus/paper/amert-tx2/stream-priority-cut-ahead.json",
    "corpus/paper/amert-tx2/fig8-no-cut-ahead.json",
    "corpus/paper/controls/demo-sm-masking-xavier.json",
    "corpus/paper/controls/olmedo-priority-cta-boundary.json",
]


def docs_loop():
    """The ```python block of docs/python.md's simulator-loop section, run as written: its step()."""
    text = (SOURCE / "docs/python.md").read_text()
    section = text[text.index("## A simulator loop") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(code, "docs/python.md", "exec"), namespace)
    return namespace["step"]


def kernel(**fields):
    return {"threads": 1024, "regs": 32, "blocks": 1, **fields}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("hypothesis", ["alg1", "round-robin", "most-room"])
def test_the_docs_loop_places_every_block_where_and_when_predict_does(case, hypothesis):
    step = docs_loop()
    rows = tbcheck.predict(SOURCE / case, hypothesis)
    placed = step(SOURCE / case, hypothesis)
    assert len(placed) == len(rows) == tbcheck.scenario(SOURCE / case).total_blocks
    for r in rows:
        assert placed[r["kernel_index"], r["block"]] == (r["sm"], r["start"]), r


def test_a_block_that_fits_nowhere_waits_for_a_retirement():
    device = tbcheck.device("rtx3090")
    sched = tbcheck.Scheduler(device, "alg1")
    # 1024 threads: one block per SM, so a full wave leaves no room for another.
    first = sched.launch(kernel(name="wave", blocks=device.sms), 0)
    assert first == {"accepted": True, "kernel": 0, "status": "runs", "reason": None}
    status, blocks = sched.place(0)
    assert status == "placed" and len(blocks) == device.sms
    assert sorted(b["sm"] for b in blocks) == list(range(device.sms))
    assert sched.launch(kernel(name="late"), 1)["kernel"] == 1
    assert sched.place(1) == ("none-fits", [])
    assert sched.blocks_left(1) == 1 and sched.in_flight == device.sms and sched.kernels == 2
    freed = blocks[5]
    assert sched.room(freed["sm"], 1) == 0
    sched.retire(freed["kernel"], freed["block"], 2)
    assert sched.room(freed["sm"], 1) == 1
    assert sched.place(2) == ("placed", [{"kernel": 1, "block": 0, "sm": freed["sm"]}])
    assert sched.blocks_left(1) == 0 and sched.in_flight == device.sms
    for b in blocks:
        if b != freed:
            sched.retire(b["kernel"], b["block"], 3)
    sched.retire(1, 0, 3)
    assert sched.place(3) == ("nothing-eligible", []) and sched.in_flight == 0


def test_bad_input_is_input_error_with_the_message_of_the_cpp_scheduler():
    sched = tbcheck.Scheduler("rtx3090", tbcheck.hypothesis("round-robin"))
    assert sched.hypothesis.name == "round-robin" and sched.device.name == "rtx3090"
    with pytest.raises(tbcheck.InputError, match="threads") as e:
        sched.launch(kernel(threads=4096), 0)
    assert e.value.field == "kernel.threads"
    sched.launch(kernel(blocks=4), 5)
    with pytest.raises(tbcheck.InputError, match="block 2 of kernel 0 was never placed") as e:
        sched.retire(0, 2, 5)
    assert (e.value.where, e.value.field) == ("scheduler", "block")
    with pytest.raises(tbcheck.InputError, match="no kernel 3"):
        sched.retire(3, 0, 5)
    with pytest.raises(tbcheck.InputError, match="before the previous call's time 5") as e:
        sched.place(4)
    assert e.value.field == "now"
    assert sched.place(5)[0] == "placed"
    sched.retire(0, 2, 6)
    with pytest.raises(tbcheck.InputError, match="already retired"):
        sched.retire(0, 2, 6)
    # A kernel one block of which fits no SM is refused as a value, not an error.
    refused = sched.launch(kernel(regs=255), 6)  # 1024 x 255 registers exceed an SM's register file
    assert refused["accepted"] is False and refused["kernel"] is None
    assert refused["status"] == "kernel-never-fits" and refused["reason"]
    with pytest.raises(tbcheck.InputError, match="kernel dict"):
        sched.launch([1, 2], 6)
    assert tbcheck.Scheduler.support("rtx3090", "fermi")["status"] == "unsupported"
    with pytest.raises(tbcheck.InputError, match="gpc-priority") as e:
        tbcheck.Scheduler("rtx3090", "fermi")
    assert e.value.field == "selection"
