"""openclaw-lab: replay conversations through memory systems and measure what they remember.

Start with `openclaw-lab init my-experiment.toml`, then `openclaw-lab run my-experiment.toml`."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from openclaw_lab.errors import OpenClawError

__all__ = ["main"]


def _run(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.config import ExperimentConfig
    from openclaw_lab.harness.experiment import run_experiment
    from openclaw_lab.evaluation.metrics import unscored_note
    from openclaw_lab.harness.report import metrics_table, qa_table

    changes = {key: _parse_value(value) for key, _, value in (a.partition("=") for a in args.set or [])}
    if args.qa is not None:
        changes["qa.enabled"] = args.qa == "on"
    config = _with_engine(ExperimentConfig.from_toml(args.file).with_values(changes), args)
    result = run_experiment(config, results_dir=args.results)
    print(unscored_note(result.questions))
    print(metrics_table(result.record()).to_string())
    if result.qa:
        print(qa_table(result.qa))
    memory = {k: round(v, 4) for k, v in result.memory.items() if isinstance(v, float)}
    print("memory:", memory)
    print(f"results, plots and report: {result.path}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.config import ExperimentConfig
    from openclaw_lab.harness.sweep import run_sweep

    config = _with_engine(ExperimentConfig.from_toml(args.file), args)
    result = run_sweep(config, results_dir=args.results, reuse=not args.fresh)
    print(result.summary.round(4).to_string(index=False))
    print(f"summary and Pareto plot: {result.path}")
    return 0


def _with_engine(config: Any, args: argparse.Namespace) -> Any:
    """``config`` with the engine options given (``--engine``, ``--address``, ``--num-cpus``) over its own."""
    from openclaw_lab.harness.config import EngineConfig

    given = {"name": args.engine, "address": args.address, "num_cpus": args.num_cpus}
    if all(value is None for value in given.values()):
        return config
    settings = {**asdict(config.engine), **{key: value for key, value in given.items() if value is not None}}
    return replace(config, engine=EngineConfig(**settings))


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=["local", "processes", "ray"], default=None,
                        help="where to run: this process, forked worker processes, or Ray (default: the config's)")
    parser.add_argument("--address", default=None, help="a Ray cluster: auto, or ray://HOST:PORT (default: a local Ray)")
    parser.add_argument("--num-cpus", type=int, default=None,
                        help="worker processes, or a local Ray's CPUs (default: the machine's)")


def _compare(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.compare import compare_dirs
    from openclaw_lab.harness.report import qa_table, stale_table
    from openclaw_lab.harness.results import read_run

    table = compare_dirs(args.dirs, level=args.level, metrics=args.metrics, stat_test=args.test,
                         baseline=args.baseline, categories=args.categories)  # fmt: skip
    print(table.round(4).to_string())
    for run_dir in args.dirs:  # QA and stale facts, each with McNemar's p against the run's first system
        metrics = read_run(run_dir)["metrics"]
        if qa := metrics.get("qa"):
            print(f"{run_dir}: {qa_table(qa)}")
        if "stale_above_current" in (quality := metrics["memory"].get("quality", {})):
            print(f"{run_dir}: stale facts (lower is better)\n{stale_table(quality).round(4).to_string()}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.report import write_report

    print(write_report(args.dir).read_text())
    return 0


def _check(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.check import GateSettings, check_run, write_baseline
    from openclaw_lab.harness.results import read_run

    if args.update:
        write_baseline(args.result, args.baseline)
        print(f"baseline written: {args.baseline}")
        return 0
    settings = GateSettings.of_run(read_run(args.result)["config"]["metrics"], tolerance=args.tolerance,
                                   max_p=args.max_p, exact=args.exact or None)  # fmt: skip
    verdicts = check_run(args.result, args.baseline, settings)
    for verdict in verdicts:
        if verdict.status != "equal":
            print(f"{verdict.status.upper() if verdict.failed else verdict.status:<15} {verdict}")
    failed = [v for v in verdicts if v.failed]
    counts = ", ".join(f"{sum(v.status == s for v in verdicts)} {s}" for s in dict.fromkeys(v.status for v in verdicts))
    print(f"check {'failed' if failed else 'passed'}: {len(verdicts)} metric(s), {counts}")
    return 1 if failed else 0


def _export(args: argparse.Namespace) -> int:
    from openclaw_lab.harness.export import export_trec

    for path in export_trec(args.dir, args.dest):
        print(path)
    return 0


def _llm_serve(args: argparse.Namespace) -> int:
    import signal

    from openclaw_lab.llm_server import LocalServer

    server = LocalServer(args.model, port=args.port, n_ctx=args.n_ctx, threads=args.threads)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a SIGTERM to this process stops the server too
    with server:
        endpoint = f'{{ base_url = "{server.base_url}", model = "{server.model.alias}" }}'
        print(f"llm server: {server.model.about}\n  pid {server.pid}, log {server.log}\n"
              f"  in an experiment: [qa] answer = {endpoint}\nCtrl-C stops it.", flush=True)
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass
    return 0 if server.process.returncode in (0, -signal.SIGTERM) else 1


def _judge_sheet(args: argparse.Namespace) -> int:
    import pandas as pd

    from openclaw_lab.evaluation.agreement import labelling_sheet

    labelling_sheet(pd.read_csv(_qa_csv(args.dir)), args.n, args.seed).to_csv(sys.stdout, index=False)
    return 0


def _judge_agreement(args: argparse.Namespace) -> int:
    import pandas as pd

    from openclaw_lab.evaluation.agreement import judge_agreement

    figures = judge_agreement(pd.read_csv(_qa_csv(args.dir)), pd.read_csv(args.labels, keep_default_na=False))
    print("\n".join(f"{key}: {round(value, 4) if isinstance(value, float) else value}" for key, value in figures.items()))
    return 0


def _qa_csv(run_dir: Path) -> Path:
    if not (path := run_dir / "qa.csv").is_file():
        raise ValueError(f"{run_dir}: no qa.csv (a run with the QA stage on writes one)")
    return path


def _init(args: argparse.Namespace) -> int:
    from importlib.resources import files

    if args.file.exists():
        raise FileExistsError(f"{args.file} exists; choose another path (nothing was written)")
    template = files("openclaw_lab.harness").joinpath("templates/starter.toml").read_text()
    name = args.name or args.file.stem
    args.file.parent.mkdir(parents=True, exist_ok=True)
    args.file.write_text(template.replace("{name}", name).replace("{path}", str(args.file)))
    print(f"wrote {args.file}; run it with: openclaw-lab run {args.file}")
    return 0


def _download(args: argparse.Namespace) -> int:
    from openclaw_lab.datasets import download

    print(f"saved: {download(args.name, args.dest)}")
    return 0


def _tolerance(text: str):
    from openclaw_lab.harness.tolerance import Tolerance

    try:
        return Tolerance.parse(float(text) if not text.strip().endswith("%") else text, "--tolerance")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _names(text: str) -> list[str]:
    """A comma-separated list of names, e.g. ``recall@5,ndcg@10``."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _parse_value(text: str):
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


EXAMPLES = {
    "init": "openclaw-lab init experiments/mine.toml",
    "run": "openclaw-lab run experiments/default.toml --set dataset.limit=2",
    "sweep": "openclaw-lab sweep experiments/locomo-decay-sweep.toml --engine processes",
    "compare": "openclaw-lab compare results/locomo-baselines/<run-id> --level turn --baseline bm25",
    "report": "openclaw-lab report results/locomo-baselines/<run-id>",
    "check": "openclaw-lab check results/ci/ci-gate --baseline results/baselines/locomo-ci.json",
    "export": "openclaw-lab export results/locomo-baselines/<run-id>",
    "download": "openclaw-lab download locomo",
    "llm": "openclaw-lab llm serve --model smollm2-135m --port 8080",
    "judge": "openclaw-lab judge sheet results/locomo-qa-local/<run-id> --n 50 > labels.csv",
}


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="openclaw-lab", description=__doc__, formatter_class=formatter,
                                     epilog="example:\n  " + EXAMPLES["run"])  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                                   epilog=f"example:\n  {EXAMPLES[name]}", formatter_class=formatter)  # fmt: skip

    init = command("init", "write a commented starter experiment (TOML)")
    init.add_argument("file", type=Path, help="where to write it, e.g. experiments/mine.toml")
    init.add_argument("--name", default=None, help="the experiment's name (default: the file's stem)")
    init.set_defaults(handler=_init)
    run = command("run", "run one experiment (a TOML file)")
    run.add_argument("file", type=Path)
    run.add_argument("--results", type=Path, default=Path("results"))
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting, e.g. dataset.limit=2")
    run.add_argument("--qa", choices=["on", "off"], default=None, help="turn the QA stage on or off (default: the config)")
    _add_engine_options(run)
    run.set_defaults(handler=_run)
    sweep = command("sweep", "run an experiment's [sweep] grid")
    sweep.add_argument("file", type=Path)
    sweep.add_argument("--results", type=Path, default=Path("results"))
    sweep.add_argument("--fresh", action="store_true", help="rerun every point, even those an earlier sweep wrote")
    _add_engine_options(sweep)
    sweep.set_defaults(handler=_sweep)
    compare = command("compare", "compare run folders with significance tests")
    compare.add_argument("dirs", nargs="+", type=Path)
    compare.add_argument("--level", default="session", choices=["turn", "session"])
    compare.add_argument("--baseline", default=None, help="the system the others are tested against (default: the first)")
    compare.add_argument("--test", default=None, choices=["student", "fisher", "tukey"],
                         help="the paired test (default: the run's metrics.significance)")
    compare.add_argument("--metrics", type=_names, default=None, metavar="M,M",
                         help="ranx's metrics or recall_all@k, ndcg_lme@k (default: recall@10,hit_rate@5,ndcg@10,mrr)")
    compare.add_argument("--categories", type=_names, default=None, metavar="C,C",
                         help="only questions of these categories (e.g. single-hop,multi-hop,temporal,open-domain)")
    compare.set_defaults(handler=_compare)
    report = command("report", "write report.md for a run folder")
    report.add_argument("dir", type=Path)
    report.set_defaults(handler=_report)
    check = command("check", "fail when gated metrics fall below a baseline")
    check.add_argument("result", type=Path)
    check.add_argument("--baseline", type=Path, required=True)
    check.add_argument("--tolerance", type=_tolerance, default=None,
                       help="override the run's metrics.gate_tolerance for every metric: 0.01 (absolute) or 2%%")
    check.add_argument("--max-p", type=float, default=None, help="override metrics.gate_max_p (default 0.05)")
    check.add_argument("--update", action="store_true", help="write the baseline from this run instead")
    check.add_argument("--exact", action="store_true", help="fail on any difference from the baseline, up or down")
    check.set_defaults(handler=_check)
    export = command("export", "write a run's runs and qrels as TREC files (trec_eval, ir_measures)")
    export.add_argument("dir", type=Path)
    export.add_argument("--dest", type=Path, default=None, help="folder (default: <run>/trec)")
    export.set_defaults(handler=_export)
    fetch = command("download", "fetch a dataset from its public address (needs internet)")
    fetch.add_argument("name", help="a dataset with a card, e.g. locomo")
    fetch.add_argument("--dest", type=Path, default=None, help="folder (default: the first data path entry)")
    fetch.set_defaults(handler=_download)
    llm = command("llm", "a local LLM server for the QA stage (llama.cpp's, a model from a registry package)")
    serve = llm.add_subparsers(dest="action", required=True, metavar="ACTION").add_parser(
        "serve", help="start it on 127.0.0.1 until Ctrl-C", description="Start llama-cpp-python's server on "
        "127.0.0.1 with a packaged model (checked by sha256); Ctrl-C or SIGTERM stops it.")  # fmt: skip
    from openclaw_lab.llm_server import MODELS  # the names only: it imports nothing heavy

    serve.add_argument("--model", choices=list(MODELS), default="smollm2-135m")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--n-ctx", type=int, default=4096, help="context tokens (default 4096)")
    serve.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    serve.set_defaults(handler=_llm_serve)
    judge = command("judge", "measure a QA run's judge against hand labels")
    actions = judge.add_subparsers(dest="action", required=True, metavar="ACTION")
    sheet = actions.add_parser("sheet", help="print a CSV of verdicts to label by hand (CORRECT or WRONG in 'label')")
    sheet.add_argument("dir", type=Path, help="a run folder with qa.csv")
    sheet.add_argument("--n", type=int, default=50, help="verdicts, the same number from each system (default 50)")
    sheet.add_argument("--seed", type=int, default=0)
    sheet.set_defaults(handler=_judge_sheet)
    agreement = actions.add_parser("agreement", help="the judge's agreement with a labelled sheet, and Cohen's kappa")
    agreement.add_argument("dir", type=Path, help="the run folder the sheet was drawn from")
    agreement.add_argument("labels", type=Path, help="the sheet, its 'label' column filled in")
    agreement.set_defaults(handler=_judge_agreement)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (OpenClawError, ValueError, OSError) as error:  # bad input: one line; anything else is a bug
        print(f"openclaw-lab {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
