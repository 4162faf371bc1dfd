"""Job files between the evaluator and its worker: what is written is what is read, mapped or copied."""

from __future__ import annotations

import torch
from foundry.evaluate import jobfiles


def test_round_trip_copied_and_mapped(tmp_path):
    payload = {
        "init": [3, 4.5, "name"],
        "state": {"weight": torch.randn(5, 7), "steps": torch.tensor(3)},
        "trials": [[torch.randn(2, 3, dtype=torch.float16), 7], [torch.arange(6).view(2, 3).t()]],
    }
    path = tmp_path / "job.pt"
    jobfiles.save(payload, path)
    for mapped in (False, True):
        back = jobfiles.load(path, mapped=mapped)
        assert back["init"] == payload["init"]
        assert torch.equal(back["state"]["weight"], payload["state"]["weight"])
        assert back["trials"][0][0].dtype is torch.float16 and back["trials"][0][1] == 7
        assert torch.equal(back["trials"][0][0], payload["trials"][0][0])
        assert back["trials"][1][0].stride() == payload["trials"][1][0].stride()
        assert torch.equal(back["trials"][1][0], payload["trials"][1][0])


def test_a_copied_load_does_not_follow_later_writes_to_the_file(tmp_path):
    path = tmp_path / "outputs.pt"
    jobfiles.save([torch.zeros(1000)], path)
    copied = jobfiles.load(path)
    jobfiles.save([torch.ones(1000)], path)
    assert float(copied[0].sum()) == 0.0


def test_job_text_files_are_checked_once_and_used_from_memory(tmp_path):
    import inspect
    import sys

    import pytest

    source = "def twice(x):\n    return 2 * x\n"
    (tmp_path / "candidate.py").write_text(source)
    (tmp_path / "job.json").write_text('{"device": "cpu"}')
    expected = jobfiles.digest(source.encode(), b'{"device": "cpu"}')
    blobs = jobfiles.read_checked(tmp_path, ("candidate.py", "job.json"), expected)
    assert blobs == [source.encode(), b'{"device": "cpu"}']
    path = str(tmp_path / "candidate.py")
    try:
        module = jobfiles.load_candidate(blobs[0].decode(), path, name="foundry_candidate_test")
        # another process writes there afterwards: the source Triton would read is still the checked one
        (tmp_path / "candidate.py").write_text("def twice(x):\n    return 3 * x\n")
        assert module.twice(4) == 8
        assert inspect.getsource(module.twice) == source
    finally:
        sys.modules.pop("foundry_candidate_test", None)
    with pytest.raises(jobfiles.JobChanged):  # the file no longer matches the digest
        jobfiles.read_checked(tmp_path, ("candidate.py", "job.json"), expected)
    assert jobfiles.digest(b"ab", b"c") != jobfiles.digest(b"a", b"bc")  # lengths are part of it
