# The tbcheck Python module against the tbcheck command: predictions, validation, distinguish and errors
# must be what the CLI says (run through CTest: python_module, see tests/CMakeLists.txt).
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tbcheck

SOURCE = Path(os.environ.get("TBCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BINARY = os.environ.get("TBCHECK_BINARY", "")
CASE = SOURCE / "corpus/paper/000-wang/case-4.2.json"


def cli(*args):
    if not BINARY:
        pytest.skip("TBCHECK_BINARY (the tbcheck command) not set")
    return subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, cwd=SOURCE)


def cli_json(*args):
    r = cli(*args, "--json")
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    for k in ("schema_version", "tool"):
        out.pop(k, None)
    return out


def test_shipped_devices_and_hypotheses_are_those_of_the_corpus():
    assert sorted(tbcheck.devices()) == sorted(p.stem for p in (SOURCE / "corpus/devices").glob("*.json"))
    assert sorted(tbcheck.hypotheses()) == sorted(p.stem for p in (SOURCE / "corpus/hypotheses").glob("*.json"))


def test_device_and_hypothesis_carry_their_file_fields():
    d = tbcheck.device("rtx3090")
    on_disk = json.loads((SOURCE / "corpus/devices/rtx3090.json").read_text())
    assert d.name == "rtx3090" and d.sms == on_disk["sms"] and d.to_dict()["sms"] == on_disk["sms"]
    from_file = tbcheck.device(SOURCE / "corpus/devices/rtx3090.json")
    assert from_file.to_dict() == d.to_dict()
    h = tbcheck.hypothesis("alg1")
    assert h.name == "alg1" and h.to_dict()["selection"] == "most-room"
    assert tbcheck.hypothesis(SOURCE / "corpus/hypotheses/olmedo.json").name == "olmedo"


def test_a_composition_name_round_trips_and_a_shipped_one_keeps_its_name():
    names = tbcheck.compositions()
    assert len(names) > 1000 and "alg1" in names
    for name in [n for n in names if "+" in n][:: len(names) // 7]:
        h = tbcheck.composition(name)
        assert h.composition_name == name and h.name == name
        assert tbcheck.hypothesis(name).to_dict() == h.to_dict()
    assert tbcheck.composition("alg1").name == "alg1"
    changed = next(n for n in names if n.startswith("alg1+"))
    both = tbcheck.resolve_hypotheses(f"round-robin,{changed}")
    assert [h.name for h in both] == ["round-robin", changed]
    with pytest.raises(tbcheck.InputError, match="given twice"):
        tbcheck.resolve_hypotheses(f"{changed},{changed}")


def test_predict_rows_are_the_blocks_the_cli_predicts():
    rows = tbcheck.predict(CASE, "alg1")
    want = cli_json("predict", CASE, "--hypothesis", "alg1")
    expect = [(k["name"], b, blk["sm"], blk["start"], blk["end"])
              for k in want["kernels"] for b, blk in enumerate(k["blocks"])]
    got = [(r["kernel"], r["block"], r["sm"], r["start"], r["end"]) for r in rows]
    assert got == expect
    assert {r["hypothesis"] for r in rows} == {"alg1"} and {r["device"] for r in rows} == {"rtx3090"}


def test_predict_takes_a_dict_a_scenario_and_several_hypotheses():
    sc = json.loads(CASE.read_text())
    by_dict = tbcheck.predict({"device": sc["device"], "kernels": sc["kernels"][:2]}, "round-robin")
    assert len(by_dict) == sum(k["blocks"] for k in sc["kernels"][:2])
    s = tbcheck.scenario(CASE)
    assert s.total_blocks == sum(k["blocks"] for k in sc["kernels"])
    both = tbcheck.predict(s, "alg1,round-robin")
    assert [r for r in both if r["hypothesis"] == "alg1"] == tbcheck.predict(CASE, tbcheck.hypothesis("alg1"))
    assert {r["hypothesis"] for r in both} == {"alg1", "round-robin"}


def test_predict_rows_make_a_pandas_table():
    pd = pytest.importorskip("pandas", reason="pandas not installed (Debian: python3-pandas)")
    df = pd.DataFrame(tbcheck.predict(CASE))
    assert list(df.columns[:6]) == ["hypothesis", "device", "kernel", "kernel_index", "block", "sm"]
    assert len(df) == tbcheck.scenario(CASE).total_blocks
    assert df.groupby("kernel")["block"].count().to_dict() == {k["name"]: k["blocks"] for k in
                                                                json.loads(CASE.read_text())["kernels"]}


def test_validate_is_the_cli_document():
    folder = SOURCE / "corpus/paper/000-wang"
    got = tbcheck.validate(folder, "alg1,round-robin", level="exact")
    assert got == cli_json("validate", folder, "--hypothesis", "alg1,round-robin", "--level", "exact")
    verdicts = [r["levels"]["exact"]["verdict"] for c in got["cases"] for r in c["results"]]
    assert len(verdicts) == 2 * len(list(folder.glob("*.json"))) and "pass" in verdicts


def test_distinguish_separates_a_pair_as_the_cli_does():
    args = dict(device="rtx3090", timeout=1.0, budget=1.0, samples=200)
    pairs = tbcheck.distinguish(["round-robin", "most-room"], **args)
    want = cli_json("distinguish", "--hypothesis", "round-robin,most-room", "--device", "rtx3090", "--timeout", 1,
                    "--pair-budget", 1, "--samples", 200, "--jobs", 1)["pairs"]
    assert len(pairs) == 1 and pairs[0]["outcome"] == "separated"
    drop = ("solver_seconds", "wall_seconds")
    strip = lambda p: {k: v for k, v in p.items() if k not in drop and k != "case"}  # noqa: E731
    assert strip(pairs[0]) == strip(want[0])
    assert pairs[0]["case"]["kernels"] == want[0]["case"]["kernels"]


@pytest.mark.parametrize("call, args", [
    ("predict", ["--hypothesis", "no-such"]),
    ("predict", ["--case", "nope"]),
])
def test_errors_carry_the_cli_message(call, args):
    r = cli(call, CASE, *args)
    assert r.returncode == 2
    message = r.stderr.strip().removeprefix("tbcheck: error: ")
    with pytest.raises(tbcheck.InputError) as e:
        if args[0] == "--hypothesis":
            tbcheck.predict(CASE, args[1])
        else:
            tbcheck.predict(CASE, "alg1", case=args[1])
    assert str(e.value) == message
    assert isinstance(e.value, ValueError) and e.value.reason in message


def test_bad_input_is_an_input_error_never_a_crash():
    with pytest.raises(tbcheck.InputError, match="unknown"):
        tbcheck.device("no-such-gpu")
    with pytest.raises(tbcheck.InputError, match="kernels"):
        tbcheck.predict({"device": "rtx3090", "kernels": "many"})
    with pytest.raises(tbcheck.InputError, match="mechanism=value"):
        tbcheck.composition("alg1+registers")
    with pytest.raises(tbcheck.InputError, match="registers"):
        tbcheck.composition("alg1+registers=sideways")
    with pytest.raises(tbcheck.InputError, match="--timeout"):
        tbcheck.distinguish(["alg1", "olmedo"], timeout=0)
    with pytest.raises(tbcheck.InputError, match="not JSON data"):
        tbcheck.predict({"device": "rtx3090", "kernels": [object()]})


def test_plot_example_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed (Debian: python3-matplotlib)")
    script = SOURCE / "docs/examples/python/plot_blocks.py"
    out = tmp_path / "blocks.png"
    # The script imports the tbcheck this test imported, from any folder.
    env = dict(os.environ, PYTHONPATH=str(Path(tbcheck.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, script, out], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_leads_pair_is_the_engines_pair_rule():
    d = tbcheck.device("rtx2080ti")  # 68 SMs: a grid pairs from 2 x 68 + 5 blocks while 2 x 68 + 3 remain
    paired = tbcheck.hypothesis("alg1+issue=paired")
    assert not any(paired.leads_pair(d, 140, b) for b in range(140))
    assert [b for b in range(141) if paired.leads_pair(d, 141, b)] == [0, 2]  # two pairs (docs/turing.md)
    assert not any(tbcheck.hypothesis("alg1").leads_pair(d, 141, b) for b in range(141))
    # Every leader's follower is on its SM in the engine's schedule.
    scenario = {"device": "rtx2080ti", "kernels": [{"name": "K1", "blocks": 206, "threads": 32, "regs": 16, "smem": 0,
                                                    "duration": 1}]}
    sms = [r["sm"] for r in sorted(tbcheck.predict(scenario, "alg1+issue=paired"), key=lambda r: r["block"])]
    leaders = [b for b in range(206) if paired.leads_pair(d, 206, b)]
    assert leaders and all(sms[b + 1] == sms[b] for b in leaders)
    with pytest.raises(tbcheck.InputError, match="block"):
        paired.leads_pair(d, 141, 141)


def test_b200_explanation_takes_the_shipped_options_from_the_engine(tmp_path):
    # The stored B200 recordings back as the public CSV's rows; the script's shipped candidates are the engine's.
    cases = json.loads((SOURCE / "corpus/hw/b200/097-threadblock-allocation.json").read_text())["cases"]
    rows = ["cluster_size,block_id,sm_id,cluster_id"]
    for c in cases:
        size = c["kernels"][0].get("cluster", [1])[0]
        rows += [f"{size},{b},{sm},{b // size}" for b, sm in enumerate(c["observation"]["sm_of_block"]["K1"])]
    csv = tmp_path / "097.csv"
    csv.write_text("\n".join(rows) + "\n")
    env = dict(os.environ, PYTHONPATH=str(Path(tbcheck.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, SOURCE / "scripts/import_b200_threadblock.py", csv, "--explain"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    launch = None
    got = {}
    for line in r.stdout.splitlines():
        if line.startswith("  cluster size "):
            launch = int(line.split()[2])
        elif line.startswith("    ") and launch is not None:
            name, _, result = line.strip().partition("  ")
            got[launch, name] = result.strip()
    assert got[1, "hopper"] == "all"  # the Hopper numbering, the map cut from this launch (docs/blackwell.md)
    assert got[1, "alg1"].startswith("0; then predicted SM 0, recorded 142")
    assert got[2, "alg1-natural-order+cluster_gpc=lowest-index"].startswith("8; then predicted SM 16, recorded 2")
    assert got[4, "alg1+cluster_gpc=lowest-index"].startswith("1; then predicted SM 16, recorded 1")
    assert got[2, "round-robin GPC choice (not an engine option)"] == "all"
    assert got[4, "round-robin GPC choice (not an engine option)"].startswith("132;")
    assert got[2, "hopper"].startswith("cannot place it")
