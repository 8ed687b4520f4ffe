"""`troupe serve` refuses an address it cannot listen on before it starts, with the fix."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app


def test_a_port_in_use_is_refused_with_the_address_and_the_fix() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        result = CliRunner().invoke(app, ["serve", "--port", str(port)])

    text = unwrapped(result.output)
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in text and "--port" in text
    assert "serving on" not in text
    assert "Traceback" not in text


def test_a_port_out_of_range_is_refused_by_the_option() -> None:
    result = CliRunner().invoke(app, ["serve", "--port", "99999"])

    assert result.exit_code == 2
    assert "--port" in result.output and "65535" in result.output


def test_a_host_that_does_not_resolve_is_refused() -> None:
    result = CliRunner().invoke(app, ["serve", "--host", "no-such-host.invalid"])

    text = unwrapped(result.output)
    assert result.exit_code == 2
    assert "no-such-host.invalid" in text and "127.0.0.1" in text
