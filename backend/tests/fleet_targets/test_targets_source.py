"""Targets from targets_file / targets_dir: tags, TOML and YAML loading, duplicates across files,
and a reload that adds and removes targets while an unchanged target keeps its poller and polls on;
a bad file changes nothing and its error names the file, never a DSN."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from poolscope.auth import AuthService
from poolscope.config import Settings, TargetConfig, load_settings
from poolscope.services import run_services
from poolscope.targets_source import TargetsError, TargetsWatcher, load, targets_of
from tests.waiting import await_for

SECRET = "s3cretPw"


def settings_with(tmp_path: Path, **values: object) -> Settings:
    return Settings(store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", **values)  # type: ignore[arg-type]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    # Same-second rewrites must still be seen: bump mtime explicitly.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    return path


def test_tags_are_validated():
    ok = TargetConfig(name="db1", dsn="mysql://u:p@h/", tags={"cluster": "eu-1", "role": "primary"})
    assert ok.tags == {"cluster": "eu-1", "role": "primary"}
    for bad in (
        {"1x": "a"},
        {"cluster": ""},
        {"cluster": " lead"},
        {"c": "x" * 65},
        {f"t{i}": "v" for i in range(17)},
    ):
        with pytest.raises(ValidationError):
            TargetConfig(name="db1", dsn="mysql://u:p@h/", tags=bad)


def test_toml_file_and_yaml_dir_merge_with_inline_targets(tmp_path):
    file = write(
        tmp_path / "targets.toml",
        '[[targets]]\nname = "t1"\ndsn = "mysql://u:p@h1/"\ntags = { cluster = "a" }\n'
        '[[targets]]\nname = "t2"\ndsn = "mysql://u:p@h2/"\n',
    )
    write(tmp_path / "d" / "one.yaml", "name: y1\ndsn: mysql://u:p@h3/\ntags: {role: replica}\n")
    write(
        tmp_path / "d" / "many.yml",
        "- {name: y2, dsn: 'mysql://u:p@h4/'}\n- {name: y3, dsn: 'mysql://u:p@h5/'}\n",
    )
    write(tmp_path / "d" / "snippet.toml", 'name = "y4"\ndsn = "mysql://u:p@h6/"\n')
    write(tmp_path / "d" / "notes.txt", "not a target")
    config = write(
        tmp_path / "poolscope.toml",
        f'targets_file = "{file}"\ntargets_dir = "{tmp_path / "d"}"\n'
        '[[targets]]\nname = "inline"\ndsn = "mysql://u:p@h0/"\n',
    )
    settings = load_settings(config, store_url="sqlite+aiosqlite:///:memory:")
    assert [t.name for t in settings.targets] == ["inline", "t1", "t2", "y2", "y3", "y1", "y4"]
    assert [t.name for t in settings.inline_targets] == ["inline"]
    assert {t.name: t.tags for t in settings.targets}["t1"] == {"cluster": "a"}
    assert {t.name: t.tags for t in settings.targets}["y1"] == {"role": "replica"}


def test_a_duplicate_name_across_files_is_a_clear_error(tmp_path):
    write(tmp_path / "d" / "a.yaml", "- {name: db1, dsn: 'mysql://u:p@h/'}\n")
    write(tmp_path / "d" / "b.yaml", "- {name: db1, dsn: 'mysql://u:p@h/'}\n")
    with pytest.raises(ValidationError, match=r"b\.yaml: target db1 is also defined in .*a\.yaml"):
        settings_with(tmp_path, targets_dir=tmp_path / "d")
    with pytest.raises(ValidationError, match=r"a\.yaml: target db1 is also defined in the config"):
        settings_with(
            tmp_path, targets_dir=tmp_path / "d", targets=[{"name": "db1", "dsn": "mysql://u:p@h/"}]
        )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "bad.yaml",
            f"- name: db1\n  dsn: mysql://u:{SECRET}@h/\n  dsn2: [unclosed\n",
            "not valid YAML at line",
        ),
        ("bad.toml", f'[[targets]]\nname = "db1"\ndsn = "mysql://u:{SECRET}@h/\n', "not valid TOML"),
        (
            "bad.yaml",
            f"- name: db1\n  dsn: mysql://u:{SECRET}@h/\n  port: 3306\n",
            "target db1: port: Extra inputs",
        ),
        ("bad.yaml", f"- name: 'bad name'\n  dsn: mysql://u:{SECRET}@h/\n", "name: String should match"),
        ("bad.yaml", "just text", "expected a list of targets"),
    ],
)
def test_a_bad_file_names_itself_and_never_its_dsn(tmp_path, name, text, message):
    path = write(tmp_path / name, text)
    with pytest.raises(TargetsError) as caught:
        targets_of(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert SECRET not in str(caught.value)


async def test_a_watcher_keeps_everything_on_a_bad_change_and_logs_the_file(tmp_path, caplog):
    snippet = write(tmp_path / "d" / "a.yaml", "- {name: db1, dsn: 'mysql://u:p@h/'}\n")
    settings = settings_with(tmp_path, targets_dir=tmp_path / "d")
    told: list[list[str]] = []
    watcher = TargetsWatcher(settings, lambda ts: told.append([t.name for t in ts]))
    assert not await watcher.check()  # first look: same as loaded
    before = settings.targets
    write(snippet, f"- {{name: db1, dsn: 'mysql://u:{SECRET}@h/', bogus: 1}}\n- {{name: db2, dsn: 'x'}}\n")
    with caplog.at_level(logging.WARNING, logger="poolscope.targets_source"):
        assert not await watcher.check()
    assert settings.targets is before and told == []
    assert str(snippet) in caplog.text and SECRET not in caplog.text
    write(snippet, "- {name: db1, dsn: 'mysql://u:p@h/'}\n- {name: db2, dsn: 'mysql://u:p@h/'}\n")
    assert await watcher.check()
    assert told == [["db1", "db2"]] and [t.name for t in settings.targets] == ["db1", "db2"]
    assert load(settings) == settings.targets


@pytest.mark.parametrize("emptied", ["", "\n", "# being rewritten\n"], ids=["empty", "blank", "comments"])
@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
async def test_a_targets_file_emptied_changes_nothing_and_says_so_but_an_explicit_empty_list_does(
    tmp_path, caplog, emptied, suffix
):
    """A file caught empty (a tool rewriting it in place) keeps every target and warns; "no
    targets" must be said as an empty list."""
    path = tmp_path / f"targets{suffix}"
    if suffix == ".yaml":
        write(path, "- {name: db1, dsn: 'mysql://u:p@h/'}\n")
    else:
        write(path, '[[targets]]\nname = "db1"\ndsn = "mysql://u:p@h/"\n')
    settings = settings_with(tmp_path, targets_file=path)
    told: list[list[str]] = []
    watcher = TargetsWatcher(settings, lambda ts: told.append([t.name for t in ts]))
    assert not await watcher.check()
    write(path, emptied)
    with caplog.at_level(logging.WARNING, logger="poolscope.targets_source"):
        assert not await watcher.check()
    assert [t.name for t in settings.targets] == ["db1"] and told == []
    assert "empty (no targets would be polled)" in caplog.text and "explicit empty list" in caplog.text
    assert any(r.levelno == logging.WARNING for r in caplog.records)
    write(path, "targets: []\n" if suffix == ".yaml" else "targets = []\n")
    assert await watcher.check()
    assert settings.targets == [] and told == [[]]


async def test_a_reload_adds_and_removes_targets_while_an_unchanged_one_polls_on(tmp_path):
    folder = tmp_path / "d"
    write(folder / "keep.yaml", "- {name: keep, dsn: 'fixture://mariadb/10.11', tags: {role: primary}}\n")
    write(folder / "gone.toml", '[[targets]]\nname = "gone"\ndsn = "fixture://mysql/8.0"\n')
    settings = settings_with(tmp_path, targets_dir=folder, poll_interval_s=0.2)
    async with run_services(settings, AuthService(settings)) as services:
        scheduler = services.scheduler
        # The watcher in run_services would also react; drive our own for a deterministic test.
        watcher = TargetsWatcher(settings, scheduler.set_targets)
        await watcher.check()
        keep = next(p for p in scheduler.pollers if p.name == "keep")
        keep_task = scheduler._tasks["keep"]
        await wait_for_poll(services, "keep")
        first = (await services.store.latest("keep"))[0].last_poll_at  # type: ignore[index]

        (folder / "gone.toml").unlink()
        write(folder / "new.yaml", "- {name: added, dsn: 'fixture://percona/8.0'}\n")
        assert await watcher.check()
        assert sorted(p.name for p in scheduler.pollers) == ["added", "keep"]
        assert next(p for p in scheduler.pollers if p.name == "keep") is keep
        assert scheduler._tasks["keep"] is keep_task and not keep_task.done()
        assert sorted(scheduler._tasks) == ["added", "keep"]
        await wait_for_poll(services, "added")
        later = (await services.store.latest("keep"))[0].last_poll_at  # type: ignore[index]
        assert later is not None and first is not None and later > first  # kept polling

        # A changed target (new tags) restarts; the API's tags follow the config.
        write(folder / "keep.yaml", "- {name: keep, dsn: 'fixture://mariadb/10.11', tags: {role: replica}}\n")
        assert await watcher.check()
        assert next(p for p in scheduler.pollers if p.name == "keep") is not keep
        assert keep_task.done()


async def wait_for_poll(services, name: str) -> None:  # type: ignore[no-untyped-def]
    await await_for(
        lambda: services.store.latest(name),
        10,
        f"{name} was never polled",
        until=lambda latest: latest and latest[0].last_poll_at,
    )
