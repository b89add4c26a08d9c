"""The CLI: one line for any error a user can cause (exit 2), a traceback only for a bug."""

from __future__ import annotations

import tomllib

import pytest

from openclaw_lab.cli import main


def test_a_config_typo_is_one_line_naming_the_field(tmp_path, capsys):
    config = tmp_path / "typo.toml"
    config.write_text('name = "t"\n[[systems]]\nname = "a"\nstrategy = "dnese"\n')
    assert main(["run", str(config), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("openclaw-lab run: systems[0].strategy: unknown strategy 'dnese'; did you mean 'dense'? "
                   "(choose one of dense, sparse, bm25, hybrid, rerank, hybrid-context, splade, slot-recency, learned-crossfit, "
                   "finetuned-crossfit, mem0, mempalace)")  # fmt: skip
    assert not (tmp_path / "results").exists()  # nothing was started, nothing left behind


def test_a_bad_value_type_and_broken_toml_are_one_line(tmp_path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text('name = "t"\n[memory]\naccess_k = "3"\n')
    assert main(["run", str(config)]) == 2
    assert capsys.readouterr().err.strip() == "openclaw-lab run: memory.access_k: '3' is a str; expected an integer"
    config.write_text('name = "t"\n[memory\n')
    assert main(["run", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"openclaw-lab run: {config}: not valid TOML")


def test_engine_options_are_checked_before_anything_runs(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text('name = "s"\n[dataset]\nname = "synthetic"\n[sweep]\n"consolidation.threshold" = [0.1]\n')
    assert main(["sweep", str(config), "--num-cpus", "2", "--results", str(tmp_path / "results")]) == 2
    assert capsys.readouterr().err.strip() == (
        "openclaw-lab sweep: engine: num_cpus is a setting of the processes and ray engines; the local engine runs "
        "in this process")
    assert main(["run", str(config), "--engine", "processes", "--address", "auto"]) == 2
    assert capsys.readouterr().err.strip() == (
        "openclaw-lab run: engine: address is a Ray setting; set engine.name = 'ray'")
    assert main(["run", str(config), "--engine", "ray", "--num-cpus", "0"]) == 2
    assert capsys.readouterr().err.strip() == "openclaw-lab run: engine.num_cpus: 0 must be >= 1"
    assert not (tmp_path / "results").exists()


def test_an_incomplete_run_folder_is_refused(tmp_path, capsys):
    partial = tmp_path / ".20260101T000000Z-abc.partial"
    partial.mkdir()
    assert main(["check", str(partial), "--baseline", str(tmp_path / "b.json")]) == 2
    assert "did not finish" in capsys.readouterr().err
    half = tmp_path / "run"
    half.mkdir()
    (half / "metrics.json").write_text("{}")
    assert main(["compare", str(half)]) == 2
    assert "lacks config.json, environment.json, runs" in capsys.readouterr().err


def test_a_bug_keeps_its_traceback(monkeypatch):
    import openclaw_lab.harness.report as report

    monkeypatch.setattr(report, "write_report", lambda run_dir: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        main(["report", "anything"])


def test_init_writes_a_starter_whose_every_commented_setting_is_a_real_one(tmp_path, capsys):
    from openclaw_lab.harness.config import ExperimentConfig

    target = tmp_path / "experiments" / "mine.toml"
    assert main(["init", str(target)]) == 0
    text = target.read_text()
    config = ExperimentConfig.from_toml(target)
    assert config.name == "mine" and config.dataset.name == "synthetic" and len(config.systems) == 3
    # uncomment each "# key = value" line (or "# [table]" block) alone: no commented setting may be unknown
    lines, trials, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("# ["):  # a commented table: its lines come back together
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].startswith("# ")), len(lines))
            trials.append(range(i, end))
            i = end
        else:
            if lines[i].startswith("# ") and " = " in lines[i]:
                trials.append([i])
            i += 1
    assert len(trials) >= 10
    for trial in trials:
        uncommented = {n: lines[n][2:].split("  #")[0] for n in trial}
        try:
            trial_text = "\n".join(uncommented.get(n, line) for n, line in enumerate(lines))
            ExperimentConfig.from_dict(tomllib.loads(trial_text))
        except Exception as error:  # noqa: BLE001 - the message names the lines
            raise AssertionError(f"starter lines {[n + 1 for n in trial]}: {error}") from None
    assert main(["init", str(target)]) == 2  # never overwrites
    assert "exists; choose another path (nothing was written)" in capsys.readouterr().err
    assert target.read_text() == text


def test_every_command_has_an_example_in_its_help(capsys):
    from openclaw_lab.cli import EXAMPLES, build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert set(commands) == set(EXAMPLES)
    for name in commands:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert f"example:\n  openclaw-lab {name} " in capsys.readouterr().out
