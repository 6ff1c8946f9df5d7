"""DSN parsing and redaction whatever the DSN's shape: passwords with / ? # @ % :, unicode, mistyped schemes."""

from __future__ import annotations

import re

import pytest

from poolscope.config import TargetConfig
from poolscope.dsn import UNPARSEABLE, DsnError, parse_dsn, redact_dsn, redact_userinfo

# (as typed in the DSN, the password it means)
PASSWORDS = [
    ("Sl/ash9q", "Sl/ash9q"),
    ("Qu?ery9q", "Qu?ery9q"),
    ("Ha#sh9q", "Ha#sh9q"),
    ("A@t9q", "A@t9q"),
    ("Co:lon9q", "Co:lon9q"),
    ("Pe%zzcent9q", "Pe%zzcent9q"),  # not an escape: kept as typed
    ("Pe%25rcent9q", "Pe%rcent9q"),
    ("Un\u00efc\u00f6de\u20ac\U0001f511", "Un\u00efc\u00f6de\u20ac\U0001f511"),
    ("a/b?c#d@e%3Af:g", "a/b?c#d@e:f:g"),
    ("@@//??##", "@@//??##"),
]


@pytest.mark.parametrize("typed, meant", PASSWORDS)
def test_passwords_with_url_characters_parse_as_typed(typed, meant):
    parsed = parse_dsn(f"mysql://mon:{typed}@db.example:3307/app")
    assert (parsed.host, parsed.port, parsed.user, parsed.database) == ("db.example", 3307, "mon", "app")
    assert parsed.password.get_secret_value() == meant
    shown = redact_dsn(f"mysql://mon:{typed}@db.example:3307/app")
    assert shown == "mysql://mon:***@db.example:3307/app"


@pytest.mark.parametrize(
    "dsn, problem",
    [
        ("mysql//mon:{pw}@h/", "must start with mysql://"),
        ("mysql:/mon:{pw}@h/", "must start with mysql://"),
        ("mysql:mon:{pw}@h/", "must start with mysql://"),
        ("mon:{pw}@h:3306/", "must start with mysql://"),
        ("mysq://mon:{pw}@h/", "must start with mysql://"),
        ("postgres://mon:{pw}@h/", "must start with mysql://"),
        # With an @ in the password, what follows it is taken for the host: still refused.
        ("mysql://mon:{pw}", "has no @ before the host|not a host name"),
        ("mysql://:{pw}@h/", "has no user"),
        ("mysql://mon:{pw}@/", "has no host"),
        ("mysql://mon:{pw}@h:33o6/", "the port must be a number"),
        ("mysql://mon:{pw}@h:70000/", "the port must be a number"),
        ("mysql://mon:{pw}@h/?ssl-ca=/x", r"options after \? or #"),
        ("mysql://mon:{pw}@h\u00f6st/", "not a host name"),
        ("mysql://mon:{pw}%FF@h/", "%-escapes are not UTF-8"),
    ],
)
@pytest.mark.parametrize("password", ["Zx/9?q#Secret@k%", "Zx\u00fc\u20acSecret"])
def test_unusable_dsns_name_the_field_and_never_the_text(dsn, problem, password):
    text = dsn.format(pw=password)
    with pytest.raises(DsnError) as err:
        parse_dsn(text, "admin_dsn of target db1")
    message = str(err.value)
    assert message.startswith("admin_dsn of target db1: ") and re.search(problem, message)
    for fragment in ("Secret", password, text):
        assert fragment not in message
    if problem != "%-escapes are not UTF-8":  # that one is well formed: shown with the password masked
        assert redact_dsn(text) == UNPARSEABLE


def test_redaction_keeps_what_is_not_secret():
    assert redact_dsn("mysql://mon@h:3306/") == "mysql://mon@h:3306/"
    assert redact_dsn("MariaDB://mon:pw@[::1]/db") == "mariadb://mon:***@[::1]/db"
    assert parse_dsn(" mysql://mon:pw@[::1]/ \n").host == "::1"


def test_an_at_typed_for_the_colon_shows_no_part_of_the_password():
    # The rightmost @ ends the userinfo, so the password becomes part of the user name.
    dsn = "mysql://mon@Secret123@db.example/"
    params = parse_dsn(dsn)
    assert (params.user, params.password.get_secret_value()) == ("mon@Secret123", "")
    assert redact_dsn(dsn) == "mysql://***@db.example/"
    said = "Access denied for user 'mon@Secret123'@'10.0.0.9' (using password: NO)"
    assert params.redact(said) == "Access denied for user '***'@'10.0.0.9' (using password: NO)"
    # A server that cuts a long name short still quotes a piece of it: pieces of 6+ characters go too.
    assert params.redact("user 'mon@Secre' unknown") == "user '***' unknown"
    assert params.redact("SELECT command denied to user 'mon@Secret123'@'%'") == (
        "SELECT command denied to user '***'@'%'"
    )


def test_userinfo_redaction_leaves_the_rest_alone():
    assert (
        redact_userinfo("Access denied for user 'mon'@'h'", ("mon", "pw"))
        == "Access denied for user '***'@'h'"
    )
    assert redact_userinfo("Unknown database 'app'", ("mon", "")) == "Unknown database 'app'"
    assert redact_userinfo("nothing here", ()) == "nothing here"
    # A short name is hidden where it stands alone, never inside a word or as a fragment.
    assert redact_userinfo("a month of mon", ("mon",)) == "a month of ***"


def test_target_errors_name_the_setting(monkeypatch):
    target = TargetConfig(
        name="db1",
        dsn="mysql//mon:Zx/9Secret@h/",
        admin_dsn="mysql:/adm:Zx?9Secret@h/",
        admin_password_env="DB1_ADMIN_PW",
    )
    with pytest.raises(DsnError, match=r"^dsn of target db1: must start with mysql://") as err:
        target.connection_params()
    assert "Secret" not in str(err.value)
    with pytest.raises(DsnError, match=r"^admin_dsn of target db1: must start with mysql://") as err:
        target.admin_connection_params()
    assert "Secret" not in str(err.value)
    target = target.model_copy(update={"admin_dsn": target.dsn.__class__("mysql://adm@h/")})
    monkeypatch.delenv("DB1_ADMIN_PW", raising=False)
    with pytest.raises(
        DsnError, match="^admin_password_env of target db1: environment variable DB1_ADMIN_PW"
    ):
        target.admin_connection_params()
