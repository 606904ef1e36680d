"""The load generator page's server side: read-only servers explain and disable it; its
commands reach the server's one generator and refusals become messages."""

from dashkit import dashboard_app, page_module

from dashboard.loadgen.control import get_generator


def test_read_only_server_explains_and_disables_generation(tmp_path):
    with (dashboard_app(tmp_path / "store", readonly=True) as app,
          app.server.test_request_context("/loadgen")):
        rendered = str(page_module("loadgen").layout())
    assert "HITBOARD_READONLY=1" in rendered
    assert "traffic generation and backfill are disabled" in rendered
    assert rendered.count("disabled=True") >= 4


def test_commands_reach_the_generator_and_refusals_become_messages(tmp_path):
    with dashboard_app(tmp_path / "store", loadgen_max_rate=500) as app:
        generator = get_generator(app.server)

        def command(action, rate=100, sites=1, pages=3, zipf=1.1, options=(), days=2):
            return page_module("loadgen").command(generator, action, rate, sites, pages, zipf,
                                                  list(options), days)

        assert command("lg-start", rate=501) == (
            "rate must be from 1 to 500 hits/s, got 501.0", "error")
        assert command("lg-start", rate=None)[0].startswith("enter a number for rate")
        assert command("lg-spike") == ("start the generator before adding a spike", "error")
        assert command("lg-start", options=["diurnal"]) == ("Started.", "info")
        status = generator.status()
        assert status.running and status.config.diurnal == 0.5
        assert not status.config.events
        assert command("lg-start", rate=300, options=["diurnal"]) == (
            "Applied to the running generator.", "info")
        assert generator.status().config.rate == 300
        assert command("lg-spike") == ("Spike: ×10 for 30 s.", "info")
        assert generator.status().target_now == 500
        assert command("lg-stop") == ("Stopped.", "info")
        assert command("lg-stop") == ("The generator was not running.", "info")
        assert command("lg-backfill-confirm", days=None)[0] == \
            "enter a number of days from 1 to 400"
        # a day at 1 hit/s: the command is tested here, not the volume (100/s took 50 s)
        assert command("lg-backfill-confirm", rate=1, days=1) == ("Backfill started.", "info")
        generator.wait_backfill()
        assert generator.status().backfill.hits > 0
