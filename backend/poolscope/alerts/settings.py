"""Alert settings: named thresholds with documented defaults, per-target overrides, webhook receivers,
Alertmanagers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from poolscope.alerts.rules import declared_thresholds
from poolscope.rules.base import ThresholdValues, thresholds_model

# Every alert threshold by name, from the rules' own declarations (each in its rule's file,
# alerts/rules/<rule>.py); `[alerts.thresholds]` sets them, `[alerts.overrides.<target>]` replaces
# any of them per target. Its fields exist only at run time, so type checkers see the base.
if TYPE_CHECKING:

    class Thresholds(ThresholdValues): ...

else:
    Thresholds = thresholds_model(
        "Thresholds",
        "Every alert threshold by name; `[alerts.overrides.<target>]` replaces any of them per target.",
        declared_thresholds(),
    )


class WebhookReceiver(BaseModel):
    """An HTTP endpoint that gets Alertmanager webhook (version 4) payloads."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="the receiver's name (Alertmanager's `receiver`)"
    )
    # A SecretStr: webhook URLs often carry a token (Slack, PagerDuty bridges).
    url: SecretStr = Field(description="http(s) URL the payloads are POSTed to; shown without path or query")
    headers: dict[str, SecretStr] = Field(default_factory=dict, description="e.g. Authorization")
    timeout_s: float = Field(
        default=5.0, gt=0, le=60, description="one attempt, from connecting to the answer's last byte"
    )
    max_attempts: int = Field(
        default=5, ge=1, le=20, description="attempts per notification before giving up"
    )
    backoff_initial_s: float = Field(
        default=1.0, gt=0, le=60, description="pause after the first failed attempt; it doubles after each"
    )
    backoff_max_s: float = Field(default=30.0, gt=0, le=600, description="longest pause between attempts")
    queue_size: int = Field(
        default=1000,
        ge=1,
        le=100000,
        description="notifications waiting for this receiver; beyond, the oldest is dropped",
    )
    send_resolved: bool = Field(default=True, description="also notify when an alert resolves")

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: SecretStr) -> SecretStr:
        parts = urlsplit(value.get_secret_value())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("webhook url must be http(s)://host/...")
        return value

    def safe_url(self) -> str:
        return safe_url(self.url.get_secret_value())


def safe_url(url: str) -> str:
    """scheme://host:port/… : no credentials, path or query (receivers put their token in any of them)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<unparseable URL>"
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if port:
        netloc = f"{netloc}:{port}"
    rest = "…" if parts.path.strip("/") or parts.query or parts.fragment else ""
    return f"{parts.scheme}://{netloc}/{rest}"


class AlertmanagerSettings(BaseModel):
    """Alertmanagers that get Poolscope's alerts through their v2 API, as Prometheus sends them."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    # Base URLs (http://host:9093, or with a path prefix); SecretStr: basic auth may sit in them.
    urls: list[SecretStr] = Field(default_factory=list, description="Alertmanager base URLs; empty = off")
    headers: dict[str, SecretStr] = Field(default_factory=dict, description="e.g. Authorization")
    resend_interval_s: float = Field(
        default=60.0, ge=1, le=3600, description="firing alerts are sent again this often"
    )
    timeout_s: float = Field(default=10.0, gt=0, le=60, description="one post, from connecting to the answer")
    queue_size: int = Field(default=1000, ge=1, le=100000, description="batches waiting to be sent")

    @field_validator("urls")
    @classmethod
    def _http_urls(cls, values: list[SecretStr]) -> list[SecretStr]:
        for index, value in enumerate(values):
            parts = urlsplit(value.get_secret_value())
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"alertmanager url #{index + 1} must be http(s)://host:port[/prefix]")
        return values


class AlertSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="evaluate alert rules at all")
    thresholds: Thresholds = Field(
        default_factory=Thresholds, description="every alert rule's thresholds by name (see the alert rules)"
    )
    overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="target name -> thresholds that differ for that target"
    )
    resolve_after_s: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description="a firing alert resolves after its condition is clear this long",
    )
    flap_window_s: float = Field(
        default=600.0, gt=0, le=86400, description="fires are counted over this window"
    )
    flap_max_fires: int = Field(
        default=3, ge=2, le=100, description="fired this often within flap_window_s = flapping"
    )
    flap_resolve_after_s: float = Field(
        default=120.0, ge=0, le=86400, description="a flapping alert resolves only after this long clear"
    )
    # Each kept poll holds a whole TargetState (tens of kB on a busy server): keep the window short.
    # Kept only while a rule reads it (AlertRule.reads_history; none of the built-in rules does).
    history_s: float = Field(
        default=120.0, ge=10, le=3600, description="recent polls kept for rules that read them"
    )
    external_url: str | None = Field(
        default=None, description="Poolscope's address for links in webhooks; default http://listen_host:port"
    )
    webhooks: list[WebhookReceiver] = Field(
        default_factory=list, description="receivers of Alertmanager-format webhooks ([[alerts.webhooks]])"
    )
    alertmanager: AlertmanagerSettings = Field(
        default_factory=AlertmanagerSettings,
        description="Alertmanagers to post alerts to ([alerts.alertmanager])",
    )

    @model_validator(mode="after")
    def _valid_overrides(self) -> AlertSettings:
        for target, values in self.overrides.items():
            try:
                Thresholds(**{**self.thresholds.model_dump(), **values})
            except Exception as exc:
                raise ValueError(f"alerts.overrides.{target}: {exc}") from None
        names = [w.name for w in self.webhooks]
        if len(names) != len(set(names)):
            raise ValueError("webhook receiver names must be unique")
        return self

    def thresholds_for(self, target: str) -> ThresholdValues:
        values = self.overrides.get(target)
        if not values:
            return self.thresholds
        return Thresholds(**{**self.thresholds.model_dump(), **values})
