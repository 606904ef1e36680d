"""dashboard.settings: one table, resolved explicit > HITBOARD_* environment > default."""

from pathlib import Path

import pytest

from dashboard.settings import (
    SETTINGS,
    InvalidSettingError,
    Settings,
    describe,
    env_name,
    resolve,
)


def test_defaults_apply_when_nothing_is_given():
    settings = resolve({}, environ={})
    assert settings.host == "127.0.0.1"
    assert settings.port == 8050
    assert settings.workers == 1
    assert settings.readonly is False
    assert settings.store == str(Path.home() / ".local" / "share" / "hitboard")


def test_environment_beats_default_and_argument_beats_environment():
    environ = {"HITBOARD_PORT": "9001", "HITBOARD_HOST": "0.0.0.0"}
    assert resolve({}, environ=environ).port == 9001
    settings = resolve({"port": 9002, "host": None}, environ=environ)
    assert settings.port == 9002
    assert settings.host == "0.0.0.0"  # None means "not given"


def test_values_from_the_environment_are_parsed():
    settings = resolve({}, environ={"HITBOARD_READONLY": "yes", "HITBOARD_THREADS": "4",
                                    "HITBOARD_FLUSH_INTERVAL": "0.5"})
    assert settings.readonly is True
    assert settings.threads == 4
    assert settings.flush_interval == 0.5


@pytest.mark.parametrize(("name", "value"), [("port", "http"), ("port", "70000"),
                                              ("workers", "0"), ("readonly", "maybe"),
                                              ("flush_interval", "-1")])
def test_bad_values_are_refused_with_the_setting_and_its_source(name, value):
    with pytest.raises(InvalidSettingError, match=f"invalid {name} from HITBOARD_{name.upper()}"):
        resolve({}, environ={f"HITBOARD_{name.upper()}": value})


def test_unknown_setting_is_refused():
    with pytest.raises(InvalidSettingError, match="unknown setting"):
        resolve({"prot": 1}, environ={})


def test_settings_read_as_attributes_and_mapping():
    settings = resolve({"port": 1234}, environ={})
    assert isinstance(settings, Settings)
    assert settings["port"] == settings.port == 1234
    assert set(settings) == {s.name for s in SETTINGS}
    with pytest.raises(AttributeError):
        _ = settings.nope


def test_every_setting_is_documented_with_its_variable():
    rows = describe()
    assert len(rows) == len(SETTINGS)
    for name, env, _default, help_text in rows:
        assert env == f"HITBOARD_{name.upper()}"
        assert help_text


def test_the_store_resolves_explicit_then_hitboard_store_then_mongodb_uri_then_xdg(tmp_path):
    environ = {"XDG_DATA_HOME": str(tmp_path)}
    assert resolve({}, environ=environ).store == str(tmp_path / "hitboard")
    environ["MONGODB_URI"] = "mongodb://m"
    assert resolve({}, environ=environ).store == "mongodb://m"
    environ["HITBOARD_STORE"] = "/data/h"
    assert resolve({}, environ=environ).store == "/data/h"
    assert resolve({"store": "/explicit"}, environ=environ).store == "/explicit"


def test_env_name_is_the_variable_a_setting_reads():
    assert env_name("events_ttl_days") == "HITBOARD_EVENTS_TTL_DAYS"
