"""Settings: one pydantic Settings class, read from a TOML file and POOLSCOPE_* environment variables."""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from sqlalchemy.engine import make_url

from poolscope.alerts.settings import AlertSettings
from poolscope.dsn import DsnError, ParsedDsn, parse_dsn
from poolscope.perimeter.hosts import check_host_name, check_proxy_network, host_of_url
from poolscope.snapshots.settings import SnapshotSettings
from poolscope.tls import TlsConfig

# Tags (cluster, role, region, ...): shown, filtered and searched on the overview.
TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,31}")
TAG_VALUE = re.compile(r"[A-Za-z0-9_.:/@+-][A-Za-z0-9_.:/@+ -]{0,63}")
MAX_TAGS = 16


class TargetConfig(BaseModel):
    """One monitored server."""

    # A rejected DSN must not be echoed back in the error (it may carry the password).
    model_config = ConfigDict(hide_input_in_errors=True, extra="forbid")

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="the target's name in the UI, the API and alert labels"
    )
    # Not validated at load time on purpose: one mistyped DSN shows as that target being down
    # with the reason, while every other target keeps being polled.
    dsn: SecretStr = Field(
        description="mysql://user:password@host:port/ of the monitoring credential (syntax: poolscope/dsn.py)"
    )
    password_env: str | None = Field(
        default=None, description="name of an environment variable holding the monitoring password"
    )
    extra_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description=(
            "admin port to poll on; None = the server's own (@@extra_port, or @@admin_port on"
            " MySQL/Percona 8.0.14+ with admin_address set); 0 = never (set it for a target behind a"
            " TCP proxy, which the server's own port would bypass)"
        ),
    )
    connect_timeout_s: float = Field(
        default=3.0, gt=0, le=60, description="seconds to connect and log in (the admin connection's too)"
    )
    # Applying recommendations (off unless admin_dsn is set): a SEPARATE credential that may
    # SET GLOBAL (SUPER or CONNECTION ADMIN); it never leaves the backend.
    admin_dsn: SecretStr | None = Field(
        default=None, description="mysql://user:password@host:port/ of the credential that may SET GLOBAL"
    )
    admin_password_env: str | None = Field(
        default=None, description="name of an environment variable holding the admin password"
    )
    tls: TlsConfig | None = Field(default=None, description="TLS to this target; unset = plain TCP")
    admin_tls: TlsConfig | None = Field(
        default=None, description="TLS of the admin connection; unset = the same as tls"
    )
    cpus: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="CPUs of the server's host, for recommendations (default: this host's when the target is local)",
    )
    apply_variables: list[str] | None = Field(
        default=None,
        description="narrow the built-in allow-list of variables this target may change (None = all of it)",
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="labels such as cluster, role, region (name -> value), shown and filtered on the overview",
    )

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > MAX_TAGS:
            raise ValueError(f"at most {MAX_TAGS} tags")
        for name, tag in value.items():
            if not TAG_NAME.fullmatch(name):
                raise ValueError(f"tag name {name!r}: a letter, then up to 31 letters, digits, _ . -")
            if not TAG_VALUE.fullmatch(tag):
                raise ValueError(
                    f"tag {name}: 1-64 letters, digits, spaces or _ . : / @ + - (no leading space)"
                )
        return value

    @property
    def apply_enabled(self) -> bool:
        return self.admin_dsn is not None

    def admin_connection_params(self) -> ParsedDsn:
        if self.admin_dsn is None:
            raise DsnError(f"applying is not configured for {self.name} (no admin_dsn)")
        return self._params(self.admin_dsn, "admin_dsn", self.admin_password_env, "admin_password_env")

    def connection_params(self) -> ParsedDsn:
        return self._params(self.dsn, "dsn", self.password_env, "password_env")

    def admin_tls_setting(self) -> tuple[TlsConfig | None, str]:
        """The admin connection's TLS and the setting's name for errors (admin_tls, else tls)."""
        if self.admin_tls is not None:
            return self.admin_tls, f"admin_tls of target {self.name}"
        return self.tls, f"tls of target {self.name}"

    def _params(self, dsn: SecretStr, field: str, password_env: str | None, env_field: str) -> ParsedDsn:
        # Errors name the field and the target, never the DSN (dsn.py).
        parsed = parse_dsn(dsn.get_secret_value(), f"{field} of target {self.name}")
        if password_env:
            secret = os.environ.get(password_env)
            if secret is None:
                raise DsnError(
                    f"{env_field} of target {self.name}: environment variable {password_env} is not set"
                )
            parsed.password = SecretStr(secret)
        return parsed


Role = Literal["viewer", "operator"]


class UserConfig(BaseModel):
    """A person who may log in: viewers read, operators may also apply and revert."""

    model_config = ConfigDict(hide_input_in_errors=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$", description="the login name")
    role: Role = Field(description="viewer (reads) or operator (also applies, reverts, silences, captures)")
    password_hash: SecretStr | None = Field(
        default=None, description="scrypt hash printed by `poolscope hash-password`"
    )
    password_env: str | None = Field(
        default=None, description="name of an environment variable holding the plain password"
    )

    @model_validator(mode="after")
    def _one_password_source(self) -> UserConfig:
        if (self.password_hash is None) == (self.password_env is None):
            raise ValueError(f"user {self.name!r}: set exactly one of password_hash or password_env")
        if self.password_hash is not None:
            from poolscope.auth.passwords import check_hash_format

            check_hash_format(self.password_hash.get_secret_value())
        return self


class Settings(BaseSettings):
    """Everything Poolscope can be told; the file is TOML, the environment overrides it."""

    model_config = SettingsConfigDict(
        env_prefix="POOLSCOPE_", env_nested_delimiter="__", extra="forbid", hide_input_in_errors=True
    )

    poll_interval_s: float = Field(default=1.0, ge=0.1, le=60, description="seconds between polls")
    poll_timeout_s: float = Field(default=5.0, gt=0, le=60, description="a poll slower than this fails")
    store_url: str = Field(
        default="sqlite+aiosqlite:///./poolscope.db", description="any async SQLAlchemy URL"
    )
    raw_retention_hours: float = Field(
        default=6, gt=0, le=24 * 7, description="raw samples are kept this long"
    )
    rollup_retention_days: float = Field(
        default=8, gt=0, le=400, description="rollups (count, sum, min, max per step) are kept this long"
    )
    rollup_step_s: int = Field(
        default=60, ge=10, le=3600, description="the finest rollup's step; coarser tiers are 3 and 10 of them"
    )
    ratio_window_s: int = Field(default=60, ge=5, le=3600, description="window of windowed ratios")
    flight_recorder_kb: int = Field(
        default=4096,
        ge=16,
        le=65536,
        description="per target, the most memory the last 120 s of holders and queued requests may take",
    )
    listen_host: str = Field(
        default="127.0.0.1",
        description="address the dashboard and API listen on (without [[users]], loopback only unless allowed)",
    )
    listen_port: int = Field(default=8000, ge=1, le=65535, description="port the dashboard and API listen on")
    static_dir: Path | None = Field(
        default=None, description="built frontend to serve; default frontend/dist beside the backend"
    )
    targets: list[TargetConfig] = Field(
        default_factory=list, description="the servers to monitor ([[targets]])"
    )
    # Targets from files besides [[targets]], re-read on change (poolscope/targets_source.py).
    targets_file: Path | None = Field(
        default=None, description="a TOML or YAML file listing targets (same fields as [[targets]])"
    )
    targets_dir: Path | None = Field(
        default=None, description="a directory of *.toml / *.yaml / *.yml snippets, each one or more targets"
    )
    _inline_targets: list[TargetConfig] = PrivateAttr(default_factory=list)
    alerts: AlertSettings = Field(
        default_factory=AlertSettings, description="alert thresholds, lifecycle and receivers ([alerts])"
    )
    snapshots: SnapshotSettings = Field(
        default_factory=SnapshotSettings, description="incident snapshots ([snapshots])"
    )

    # --- who may log in ---
    users: list[UserConfig] = Field(
        default_factory=list,
        description="who may log in ([[users]]); once any exists, every read needs a login",
    )
    session_secret: SecretStr | None = Field(
        default=None,
        min_length=32,
        description="signs session tokens; unset = random per process (a restart logs everyone out)",
    )
    session_ttl_hours: float = Field(default=12, gt=0, le=24 * 30, description="a login lasts this long")
    cookie_secure: bool = Field(
        default=False, description="unused: sessions set no cookie any more (kept so older configs load)"
    )
    login_attempts_per_minute: int = Field(
        default=10,
        ge=1,
        le=1000,
        description=(
            "wrong passwords a minute for one user name (any address) before its logins are slowed"
            " down, never refused; 3x that per address refuses that address"
        ),
    )
    mutations_per_minute: int = Field(default=30, ge=1, le=10000, description="per user + address")
    previews_per_minute: int = Field(
        default=30,
        ge=1,
        le=10000,
        description="apply previews per user + address (each logs in with the admin credential)",
    )

    # --- the HTTP perimeter: who may read, from where, how much ---
    anonymous_read: bool = Field(
        default=False,
        description="with [[users]]: reads (GET) need no login; changes still need an operator",
    )
    allow_unauthenticated_network: bool = Field(
        default=False,
        description="allow serving on a non-loopback address with no [[users]] (everyone may read)",
    )
    metrics_token: SecretStr | None = Field(
        default=None, min_length=16, description="/metrics then needs `Authorization: Bearer <token>`"
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses/networks whose X-Forwarded-For/-Proto is believed (default: none)",
    )
    public_url: str | None = Field(
        default=None, description="the URL people open (behind a proxy); its host is an allowed Host"
    )
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Host names served besides loopback names and public_url's"
    )
    max_body_bytes: int = Field(
        default=64 * 1024, ge=1024, le=2**30, description="largest request body; beyond it 413"
    )
    max_body_bytes_by_path: dict[str, int] = Field(
        default_factory=dict,
        description="per-path body limits (exact path); the snapshot import route defaults to import_max_mb",
    )
    api_docs: bool = Field(
        default=False, description="serve Swagger UI at /api/docs (its files come with the built UI)"
    )
    live_max_streams_per_user: int = Field(
        default=10,
        ge=1,
        le=10_000,
        description="open /api/live streams per user (per address when anonymous); beyond it 429",
    )
    live_max_subscribers: int = Field(
        default=100, ge=1, le=100_000, description="open /api/live streams; beyond it 503"
    )

    # --- a fleet: poller processes sharing the targets by leases ---
    workers: int | Literal["auto"] = Field(
        default="auto",
        description=(
            "poller processes `poolscope serve` forks beside its API process; auto = one per CPU;"
            " 0 = one process that polls and serves"
        ),
    )
    node_id: str | None = Field(
        default=None,
        # 120, not the column's 128: `serve` adds "/N" (up to "/256") per forked poller.
        pattern=r"^[A-Za-z0-9_.:@-]{1,120}$",
        description=(
            "this poller's name in the fleet, unique per process; default host:pid (each forked"
            " poller adds /N). In a config shared by several hosts, set POOLSCOPE_NODE_ID per host"
        ),
    )
    lease_ttl_s: float = Field(
        default=6.0,
        ge=1,
        le=300,
        description="a poller that stops renewing loses its targets this long after its last renewal",
    )

    # --- when the store fails (docs/decisions/0301-store-outage-grace.md) ---
    store_outage_grace_s: float = Field(
        default=300.0,
        ge=0,
        le=86_400,
        description=(
            "a poller cut off from the store keeps polling the targets it holds this long (longer than a"
            " store restart or failover), and no other poller takes them meanwhile; 0 = stop at once"
        ),
    )
    store_buffer_memory_mb: float = Field(
        default=64,
        gt=0,
        le=65_536,
        description="what waits for a failing store (samples, alert changes, snapshots) is held in memory up to this",
    )
    store_buffer_spool_mb: float = Field(
        default=1024,
        ge=0,
        le=1_048_576,
        description="then in a spool file up to this (0: none); past both, new polls are dropped and counted",
    )
    spool_dir: Path | None = Field(
        default=None,
        description=(
            "where the spool files and the pollers' store status are kept (local disk); default: a"
            " poolscope-spool directory beside a SQLite store, else in the system's temporary directory"
        ),
    )

    def spool_directory(self) -> Path:
        """spool_dir, or its default (see its description)."""
        if self.spool_dir is not None:
            return self.spool_dir
        url = make_url(self.store_url)
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            return Path(url.database).resolve().parent / "poolscope-spool"
        return Path(tempfile.gettempdir()) / f"poolscope-spool-{os.getuid()}"

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 0 <= value <= 256:
            raise ValueError("workers must be auto or 0..256")
        return value

    def worker_count(self) -> int:
        """Poller processes `poolscope serve` runs (0 = none: the API process polls itself)."""
        # The CPUs this process may run on (a container's cpuset), not every CPU of the host.
        return len(os.sched_getaffinity(0)) if self.workers == "auto" else int(self.workers)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_networks(cls, value: list[str]) -> list[str]:
        return [check_proxy_network(item) for item in value]

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: list[str]) -> list[str]:
        return [check_host_name(item) for item in value]

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is not None:
            host_of_url(value)
        return value

    @field_validator("max_body_bytes_by_path")
    @classmethod
    def _body_limit_paths(cls, value: dict[str, int]) -> dict[str, int]:
        for path, limit in value.items():
            if not path.startswith("/") or not 1024 <= limit <= 2**32:
                raise ValueError(f"max_body_bytes_by_path: {path!r} must start with / and map to 1024..2^32")
        return value

    # --- recommendations and applying them ---
    # A minute: the rules weigh five minutes of evidence, and a variable changed on the server is
    # evaluated within seconds anyway (docs/decisions/0013-recommender-every-minute.md).
    recommend_interval_s: float = Field(
        default=60.0, ge=1, le=300, description="how often rules run per target"
    )
    recommend_window_s: int = Field(default=300, ge=30, le=86400, description="history the rules look at")
    guard_window_s: float = Field(
        default=60, ge=10, le=3600, description="a guarded apply watches this long after the change"
    )
    guard_by_default: bool = Field(
        default=True, description="the Apply dialog starts with Guarded ticked (an operator can untick it)"
    )
    # The verdict of a change (actions/verdict.py); the numbers behind these defaults:
    # docs/decisions/0500-change-verdict.md.
    verdict_max_load_change: float = Field(
        default=0.25,
        gt=0,
        le=10,
        description=(
            "a change's verdict is inconclusive when the median QPS, threads connected or threads"
            " running of the window after differs from the window before by more than this fraction"
        ),
    )
    verdict_qps_band: float = Field(
        default=0.2,
        gt=0,
        le=2,
        description="polls are compared at matched load: in QPS bands this wide (a fraction of the QPS)",
    )
    verdict_min_matched_polls: int = Field(
        default=20,
        ge=3,
        le=10_000,
        description="fewer polls at matched load than this on either side: the verdict is inconclusive",
    )
    verdict_confidence: float = Field(
        default=0.95, ge=0.5, le=0.999, description="confidence level of a verdict's interval"
    )

    # --- the admin connection of apply / revert ---
    admin_statement_timeout_s: float = Field(
        default=10,
        ge=0.5,
        le=600,
        description=(
            "each statement on the admin connection: the server stops it (MariaDB max_statement_time,"
            " MySQL max_execution_time for SELECTs) and Poolscope KILLs it 1 s later"
        ),
    )
    admin_lock_wait_timeout_s: int = Field(
        default=5,
        ge=1,
        le=600,
        description="lock_wait_timeout and innodb_lock_wait_timeout of the admin connection",
    )

    @model_validator(mode="after")
    def _unique_target_names(self) -> Settings:
        names = [t.name for t in self.targets]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"duplicate target names: {', '.join(duplicated)}")
        users = [u.name for u in self.users]
        duplicated = sorted({n for n in users if users.count(n) > 1})
        if duplicated:
            raise ValueError(f"duplicate user names: {', '.join(duplicated)}")
        return self

    @model_validator(mode="after")
    def _merge_target_files(self) -> Settings:
        # The [[targets]] of the config itself, kept apart so a reload can merge the files afresh.
        self._inline_targets = list(self.targets)
        if self.targets_file is not None or self.targets_dir is not None:
            from poolscope.targets_source import TargetsError, load

            try:
                self.targets = load(self)
            except TargetsError as exc:
                raise ValueError(str(exc)) from None
        return self

    @property
    def inline_targets(self) -> list[TargetConfig]:
        """The [[targets]] written in the config (settings.targets adds targets_file/targets_dir's)."""
        return self._inline_targets

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Environment beats the file (passed as init values), like every twelve-factor tool.
        return (env_settings, init_settings)


def load_settings(path: Path | str | None = None, **overrides: Any) -> Settings:
    """Read the TOML file (path, or $POOLSCOPE_CONFIG), then apply the environment on top."""
    path = path or os.environ.get("POOLSCOPE_CONFIG")
    values: dict[str, Any] = {}
    if path:
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"config file {file} does not exist")
        with file.open("rb") as handle:
            values = tomllib.load(handle)
    values.update(overrides)
    return Settings(**values)
