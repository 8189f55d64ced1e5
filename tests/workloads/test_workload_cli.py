"""`advisor workload import|list|size|delete`, saved workloads by name everywhere, and the
sizing answer for 20 people at once (the acceptance case of the workload issue)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import advisor_cli

run = advisor_cli
SEED = ("--shape", "mistral-nemo-12b", "--quant", "q4_k_m")


def _team_log(path: Path, people: int = 20, prompt_words: int = 300) -> Path:
    """`people` requests of 300 s each, all started within 10 s: `people` at once at the peak.
    The usage figures are the server's own, so token counts are exact (400 in, 250 out)."""
    lines = []
    for i in range(people):
        start = 1_717_236_000 + i * 0.5
        lines.append(
            json.dumps(
                {
                    "request": {
                        "model": "m",
                        "messages": [
                            {"role": "user", "content": " ".join(["word"] * prompt_words)}
                        ],
                    },
                    "response": {
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "ok " * 200},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 400,
                            "completion_tokens": 250,
                            "total_tokens": 650,
                        },
                    },
                    "start_time": start,
                    "end_time": start + 300,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def team(tmp_path):
    out = run("workload", "import", str(_team_log(tmp_path / "team.jsonl")), "--name", "team",
              "--json", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return tmp_path, json.loads(out.stdout)


def test_import_keeps_statistics_only_and_the_name_works_everywhere(team):
    home, data = team
    s = data["stats"]
    assert (s["requests"], s["peak_concurrency"], s["tokens"]) == (20, 20, "exact")
    assert (s["prompt_tokens_median"], s["answer_tokens_median"]) == (400, 250)
    assert data["workload"]["concurrency"] == 20 and data["workload"]["prompt_tokens"] == 400
    saved = home.rglob("workloads.json")
    text = next(saved).read_text(encoding="utf-8")
    assert "word word" not in text and "ok ok" not in text  # no text of any conversation
    listed = json.loads(run("workload", "list", "--json", home=home).stdout)
    assert [w["name"] for w in listed["workloads"]] == ["team"]
    out = run("project", *SEED, "--workload", "TEAM", "--to", "RTX 4090", "--json", home=home)
    assert out.returncode == 0, out.stderr
    proj = json.loads(out.stdout)
    assert proj["workload"]["concurrency"] == 20 and proj["workload"]["label"] == "team"


def test_sizing_twenty_people_on_an_rtx_4090_states_the_card_count_and_why(team):
    home, _ = team
    out = run("workload", "size", "team", "--device", "RTX 4090", *SEED, "--json", home=home)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    sizing = d["sizing"]
    cards = sizing["cards"]
    assert isinstance(cards, int) and cards >= 1
    chosen = sizing["chosen"]
    assert chosen["meets"] and chosen["cards"] == cards
    assert chosen["users_per_copy"] * chosen["copies"] >= 20
    assert chosen["decode_per_user_tps"] >= d["target"]["min_decode_tps"]
    assert chosen["ttft_p95_s"] <= d["target"]["ttft_p95_s"]
    assert chosen["fits"] == "yes" and chosen["basis"] in ("published", "modelled")
    answer = sizing["answer"]
    assert answer.startswith(f"{cards} card") and "GeForce RTX 4090" in answer
    assert "20 people at once" in answer and "tokens/s each" in answer
    # every smaller setup was tried and says why it falls short
    fewer = [o for o in sizing["tried"] if o["cards"] < cards]
    assert all(not o["meets"] and o["why"] for o in fewer)
    assert d["devices_with_one_or_two_cards"], "some catalogued device serves 20 people"
    assert all(v["cards"] <= 2 for v in d["devices_with_one_or_two_cards"])


def test_a_stricter_target_needs_more_cards_and_says_why_one_is_not_enough(team):
    home, _ = team
    base = json.loads(run("workload", "size", "team", "--device", "RTX 4090", *SEED, "--json",
                          home=home).stdout)["sizing"]  # fmt: skip
    one = base["tried"][0]
    strict = one["decode_per_user_tps"] * 1.02  # just above what one card gives 20 people
    out = run("workload", "size", "team", "--device", "RTX 4090", *SEED, "--min-tps",
              f"{strict:.2f}", "--json", home=home)  # fmt: skip
    sizing = json.loads(out.stdout)["sizing"]
    assert sizing["cards"] is None or sizing["cards"] >= 2
    assert f"below {float(f'{strict:.2f}'):g}" in sizing["tried"][0]["why"]


def test_per_user_speed_never_rises_with_more_users_per_card(team):
    home, _ = team
    out = run("workload", "size", "team", "--device", "RTX 4090", *SEED, "--min-tps", "1000",
              "--json", home=home)  # fmt: skip
    tried = json.loads(out.stdout)["sizing"]["tried"]
    single = sorted(
        (o["users_per_copy"], o["decode_per_user_tps"]) for o in tried if o["split"] == 1
    )
    speeds = [tps for _, tps in single]
    assert speeds == sorted(speeds, reverse=True), single


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "empty"),
        (b"\x00\x01\x02PK\x03\x04" * 100, "binary"),
        (b'[{"title": "x", "mapping": {', "truncated"),
        (b"just some prose, not a log\nand more prose\n", "format"),
    ],
)
def test_a_bad_file_is_one_sentence_and_saved_workloads_stay(team, content, words):
    home, _ = team
    saved = next(home.rglob("workloads.json"))
    before = saved.read_bytes()
    bad = home / "bad.json"
    bad.write_bytes(content)
    out = run("workload", "import", str(bad), "--name", "other", home=home)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert line.startswith("advisor: ") and "\n" not in line and "Traceback" not in line
    assert words in line.lower(), line
    assert saved.read_bytes() == before


def test_unknown_workload_names_the_saved_ones(team):
    home, _ = team
    out = run("project", *SEED, "--workload", "teem", "--to", "RTX 4090", home=home)
    assert out.returncode == 2
    assert "Did you mean team?" in out.stderr and "chat" in out.stderr


def test_a_preset_name_cannot_be_taken_and_delete_forgets(team, tmp_path):
    home, _ = team
    log = _team_log(tmp_path / "again.jsonl")
    out = run("workload", "import", str(log), "--name", "Chat", home=home)
    assert out.returncode == 2 and "built-in workload" in out.stderr
    assert run("workload", "delete", "team", home=home).returncode == 0
    listed = json.loads(run("workload", "list", "--json", home=home).stdout)
    assert listed["workloads"] == []
    out = run("workload", "delete", "team", home=home)
    assert out.returncode == 2 and "no saved workload" in out.stderr


def test_one_person_is_spoken_of_in_the_singular(tmp_path):
    out = run("workload", "size", "chat", "--device", "RTX 3060 12GB", "--shape", "llama-3.1-70b",
              home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert "serves 1 person at once" in first and "with 8 cards, 1 user gets " in first
    assert "1 user get " not in first and "tokens/s each" not in first.split("with 8 cards")[1]


def test_a_mac_is_counted_in_machines_each_with_its_own_copy(tmp_path):
    out = run("workload", "size", "many-users", "--device", "M4 Max (40-core GPU)", "--shape",
              "llama-3.1-70b", "--peak", "20", "--json", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    sizing = json.loads(out.stdout)["sizing"]
    assert sizing["tried"] and all(o["split"] == 1 for o in sizing["tried"])  # never split
    assert " machines" in sizing["answer"] and " card" not in sizing["answer"]
    out = run("workload", "size", "many-users", "--device", "M4 Max (40-core GPU)", "--peak",
              "20", "--json", home=tmp_path)  # fmt: skip
    servers = json.loads(out.stdout)["devices_with_one_or_two_cards"]
    units = {s["device_id"]: s["unit"] for s in servers}
    assert units["apple-m4-max-40c"] == "machine" and units["nvidia-geforce-rtx-4090"] == "card"


def test_sizing_a_chip_named_by_its_cpu_names_its_gpu(tmp_path):
    out = run("workload", "size", "chat", "--device", "Ryzen AI Max+ 395", "--shape",
              "qwen3-30b-a3b", "--json", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)["sizing"]["answer"]
    assert answer.endswith(
        "Ryzen AI Max+ 395 is the chip's CPU; its GPU, 'Radeon 8060S (Ryzen AI Max+ 395)' "
        "(rocm, vulkan), usually runs llama.cpp faster: try --device 'Radeon 8060S (Ryzen AI "
        "Max+ 395)'."
    )
    gpu = run("workload", "size", "chat", "--device", "Radeon 8060S", "--shape", "qwen3-30b-a3b",
              "--json", home=tmp_path)  # fmt: skip
    assert "is the chip's CPU" not in json.loads(gpu.stdout)["sizing"]["answer"]
