"""The CLI: one line for any error a user can cause (exit 2), a traceback only for a bug."""

from __future__ import annotations

import pytest

from openclaw_lab.cli import main


def test_a_config_typo_is_one_line_naming_the_field(tmp_path, capsys):
    config = tmp_path / "typo.toml"
    config.write_text('name = "t"\n[[systems]]\nname = "a"\nstrategy = "dnese"\n')
    assert main(["run", str(config), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("openclaw-lab run: systems[0].strategy: unknown strategy 'dnese'; did you mean 'dense'? "
                   "(choose one of dense, sparse, bm25, hybrid, rerank, hybrid-context, splade, learned-crossfit, finetuned-crossfit, mem0, mempalace)")  # fmt: skip
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
