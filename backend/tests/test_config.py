"""Settings: DSN parsing, redaction, validation that fails fast and never echoes a password."""

import pytest
from pydantic import ValidationError

from poolscope.config import Settings, TargetConfig, load_settings
from poolscope.dsn import DsnError, parse_dsn, redact_dsn


def test_parse_dsn_reads_every_part():
    parsed = parse_dsn("mysql://mon:p%40ss@db.example:3307/app")
    assert (parsed.host, parsed.port, parsed.user, parsed.database) == ("db.example", 3307, "mon", "app")
    assert parsed.password.get_secret_value() == "p@ss"


def test_parse_dsn_defaults_port():
    assert parse_dsn("mariadb://mon@127.0.0.1/").port == 3306


@pytest.mark.parametrize(
    "dsn, message",
    [
        ("postgres://u:topsecret@h/", "must start with mysql://"),
        ("mysql://:topsecret@h/", "has no user"),
        ("mysql://u:topsecret@h:notaport/", "the port must be a number"),
    ],
)
def test_bad_dsn_errors_are_clear_and_redacted(dsn, message):
    with pytest.raises(DsnError) as err:
        parse_dsn(dsn)
    assert message in str(err.value)
    assert "topsecret" not in str(err.value)


def test_redact_dsn_hides_only_the_password():
    assert redact_dsn("mysql://mon:hunter2@h:3306/") == "mysql://mon:***@h:3306/"
    assert redact_dsn("mysql://mon@h:3306/") == "mysql://mon@h:3306/"


def test_target_config_never_prints_its_dsn():
    target = TargetConfig(name="db1", dsn="mysql://mon:hunter2@h/")
    assert "hunter2" not in repr(target)
    assert "hunter2" not in target.model_dump_json()


def test_invalid_settings_errors_never_echo_the_dsn():
    with pytest.raises(ValidationError) as err:
        Settings(targets=[{"name": "bad name!", "dsn": "mysql://mon:hunter2@h/"}])
    assert "hunter2" not in str(err.value)


def test_duplicate_target_names_are_refused():
    with pytest.raises(ValidationError, match="duplicate target names: a"):
        Settings(targets=[{"name": "a", "dsn": "mysql://u@h/"}, {"name": "a", "dsn": "mysql://u@h2/"}])


def test_password_env_overrides_the_dsn_password(monkeypatch):
    monkeypatch.setenv("DB1_PW", "from-env")
    target = TargetConfig(name="db1", dsn="mysql://mon@h/", password_env="DB1_PW")
    assert target.connection_params().password.get_secret_value() == "from-env"
    monkeypatch.delenv("DB1_PW")
    with pytest.raises(DsnError, match="DB1_PW"):
        target.connection_params()


def test_file_then_environment(tmp_path, monkeypatch):
    config = tmp_path / "poolscope.toml"
    config.write_text('poll_interval_s = 2.0\n[[targets]]\nname = "a"\ndsn = "mysql://u@h/"\n')
    monkeypatch.setenv("POOLSCOPE_POLL_INTERVAL_S", "0.5")
    settings = load_settings(config)
    assert settings.poll_interval_s == 0.5
    assert [t.name for t in settings.targets] == ["a"]


def test_unsafe_values_fail_fast():
    with pytest.raises(ValidationError):
        Settings(poll_interval_s=0)
    with pytest.raises(ValidationError):
        Settings(unknown_setting=1)
