"""The offline stand-in on the requests issue 31 names: small, safe rules that
read the team as data, with the router deciding who does what."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import troupe
from troupe.builtins import builtin_tools
from troupe.runtime.approvals import run_with_approvals
from troupe.testing import simplify

DOCS = Path(__file__).parent.parent / "docs" / "configuration.md"


def docs_forecasting_example() -> str:
    """The forecasting topology exactly as docs/configuration.md shows it."""
    text = DOCS.read_text(encoding="utf-8")
    block = text.split("# forecasting.yaml", 1)[1].split("```", 1)[0]
    return block.split("\n", 1)[1]


def weather_now(city: str) -> dict[str, str]:
    """The weather in a city now."""
    return {"city": city, "sky": "sunny"}


def radar_image(city: str) -> dict[str, str]:
    """The rain radar image for a city."""
    return {"city": city, "image": "radar.png"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("remember the milk\n")
    (root / "config.yaml").write_text("database:\n  password: hunter2\n")
    return root


async def _turn(config: troupe.Config, text: str) -> list[Any]:
    assistant = troupe.Assistant(troupe.build_agent_tree(config))
    return [e async for e in run_with_approvals(assistant, "s1", text, policy="auto")]


def _documented(*funcs: Callable[..., Any]) -> list[troupe.Tool]:
    """Each function as a tool named after it and described by its docstring."""
    return [troupe.Tool(name=f.__name__, description=str(f.__doc__), func=f) for f in funcs]


def _called(events: list[Any]) -> list[str]:
    """The names of the tools the turn's events call."""
    return [c.name for e in events for c in e.get_function_calls()]


@pytest.mark.parametrize(
    "question",
    ["what's the weather forecast for Paris tomorrow?", "What's the weather forecast for Lyon?"],
)
async def test_the_docs_forecasting_example_reaches_the_meteorologist_from_the_library(
    tmp_path: Path, workspace: Path, question: str
) -> None:
    topology = tmp_path / "forecasting.yaml"
    topology.write_text(docs_forecasting_example())
    tools = [
        troupe.Tool(name="weather_now", description="Current weather.", func=weather_now),
        troupe.Tool(name="radar_image", description="Rain radar image.", func=radar_image),
        *builtin_tools(workspace=workspace),
    ]
    config = troupe.Config(tools=tools, model="offline", topology=str(topology))
    assistant = troupe.Assistant(troupe.build_agent_tree(config))

    reply = await assistant.run_and_collect("s1", question)

    assert "no agent on the team matches" not in reply
    assert "weather_now" in reply or "radar_image" in reply


def test_the_docs_forecasting_example_reaches_the_meteorologist_through_chat(
    tmp_path: Path, workspace: Path
) -> None:
    import sys

    from typer.testing import CliRunner

    from troupe.cli.app import app

    topology = tmp_path / "forecasting.yaml"
    topology.write_text(docs_forecasting_example())
    server = Path(__file__).parent / "fakes" / "weather_mcp_server.py"
    config = tmp_path / "troupe.yaml"
    config.write_text(
        f"topology: {topology}\nmcp_servers:\n- name: forecasts\n"
        f"  command: {sys.executable}\n  args: [{server}]\n  prefix: weather_\n"
    )

    question = "what's the weather forecast for Paris tomorrow?"
    args = ["chat", "-c", str(config), "-w", str(workspace), "--approve", "auto", question]
    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    assert "meteorologist" in result.output
    assert "no agent on the team matches" not in result.output


@pytest.mark.parametrize(
    "text",
    [
        'read notes.txt, then write "done" to out.txt',
        # German puts its "then" after the second step's verb.
        'lies notes.txt und speichere danach "done" in out.txt',
    ],
)
async def test_two_steps_for_one_agent_both_run(workspace: Path, text: str) -> None:
    config = troupe.Config(tools=builtin_tools(workspace=workspace), model="offline")

    events = await _turn(config, text)

    calls = [name for author, kind, name in simplify(events) if kind == "tool_call"]
    assert calls[:2] == ["fs_read", "fs_write"]
    assert (workspace / "out.txt").read_text() == "done"


async def test_a_secret_is_stored_under_the_name_the_request_gives(
    workspace: Path, tmp_path: Path
) -> None:
    tools = builtin_tools(workspace=workspace, data_dir=tmp_path / "data")
    config = troupe.Config(tools=tools, model="offline")

    await _turn(
        config,
        "Read config.yaml, encrypt the database password in it and store it as a secret "
        "named DB_PASS.",
    )
    events = await _turn(config, "which secrets are saved in the vault?")

    listed = str(events[-1].content)
    assert "DB_PASS" in listed
    assert "database_password" not in listed


async def test_a_backticked_command_runs_whole(workspace: Path) -> None:
    config = troupe.Config(tools=builtin_tools(workspace=workspace), model="offline")

    events = await _turn(config, "run `echo one; echo two`")

    steps = simplify(events)
    assert ("orchestrator", "transfer", "planner") not in steps
    assert [n for _, kind, n in steps if kind == "tool_call" and str(n).startswith("exec")] == [
        "exec_shell"
    ]
    assert "two" in str(events[-1].content)


def order_status(order_id: str) -> dict[str, str]:
    """Where an order stands: its status and parcel."""
    return {"order_id": order_id, "status": "shipped"}


cancelled: list[str] = []


def order_cancel(order_id: str = "") -> dict[str, str]:
    """Cancel an order before it ships."""
    cancelled.append(order_id)
    return {"order_id": order_id, "status": "cancelled"}


def one_agent_team(
    name: str, description: str, capability: tuple[str, str], keywords: tuple[str, ...]
) -> troupe.Topology:
    """A user's team of one agent, owning the tools of one prefix."""
    prefix, words = capability
    agent = troupe.AgentSpec(
        name=name, description=description, capabilities={prefix: words}, keywords=keywords
    )
    return troupe.Topology(name=name, agents=(agent,))


SHOP = one_agent_team(
    "orders",
    "Tracks and changes customers' orders.",
    ("order_", "order tracking and changes"),
    ("order", "cancel"),
)


@pytest.mark.parametrize("question", ["Where is my order 10422?", "Can I cancel order 10422?"])
async def test_a_question_never_runs_a_tool_that_cancels(question: str) -> None:
    tools = [
        troupe.Tool(name="order_cancel", description=str(order_cancel.__doc__), func=order_cancel),
        troupe.Tool(name="order_status", description=str(order_status.__doc__), func=order_status),
    ]
    cancelled.clear()

    events = await _turn(troupe.Config(tools=tools, model="offline", topology=SHOP), question)

    assert cancelled == []
    assert "order_cancel" not in [n for _, kind, n in simplify(events) if kind == "tool_call"]


async def test_a_request_to_cancel_in_so_many_words_may_cancel() -> None:
    tools = [
        troupe.Tool(name="order_cancel", description=str(order_cancel.__doc__), func=order_cancel),
        troupe.Tool(name="order_status", description=str(order_status.__doc__), func=order_status),
    ]
    cancelled.clear()

    await _turn(troupe.Config(tools=tools, model="offline", topology=SHOP), "cancel order 10422")

    assert cancelled == ["10422"]


def lookup_order(order_id: str) -> dict[str, str]:
    """Look up one order by its number: status, items, total."""
    return {"order_id": order_id, "status": "processing"}


def list_orders(email: str) -> dict[str, object]:
    """List a customer's recent orders (number, status, total) by their e-mail."""
    if "@" not in email:
        raise ValueError(f"{email!r} is not an e-mail address")
    return {"email": email, "orders": []}


@pytest.mark.parametrize(
    ("request_text", "tool", "args"),
    [
        ("Check the status of order 48870", "order_lookup", {"order_id": "48870"}),
        ("show my recent orders, I'm ana@example.org", "order_list", {"email": "ana@example.org"}),
    ],
)
async def test_the_tool_whose_typed_arguments_the_request_gives_is_chosen_and_filled(
    request_text: str, tool: str, args: dict[str, str]
) -> None:
    tools = [
        troupe.Tool(name="order_list", description=str(list_orders.__doc__), func=list_orders),
        troupe.Tool(name="order_lookup", description=str(lookup_order.__doc__), func=lookup_order),
    ]

    events = await _turn(troupe.Config(tools=tools, model="offline", topology=SHOP), request_text)

    calls = [e.get_function_calls() for e in events if e.get_function_calls()]
    made = [(c.name, c.args) for batch in calls for c in batch if c.name.startswith("order_")]
    assert made == [(tool, args)]


def lend_check_out(card_number: str, barcode: str) -> dict[str, str]:
    """Check an item out to a library card."""
    return {"card_number": card_number, "barcode": barcode, "due": "2026-12-17"}


def lend_check_in(barcode: str) -> dict[str, str]:
    """Check an item in when it comes back."""
    return {"barcode": barcode, "status": "returned"}


LENDING = one_agent_team(
    "lending",
    "Checks items out to library cards and back in.",
    ("lend_", "loans and returns"),
    ("check out", "check in", "barcode"),
)


@pytest.mark.parametrize(
    ("request_text", "tool", "args"),
    [
        (
            "Check out barcode 39205518 to card EL-233046.",
            "lend_check_out",
            {"card_number": "EL-233046", "barcode": "39205518"},
        ),
        (
            "Check out item 39417762 for card EL-251893, please.",
            "lend_check_out",
            {"card_number": "EL-251893", "barcode": "39417762"},
        ),
        ("Check in barcode 39517742.", "lend_check_in", {"barcode": "39517742"}),
    ],
)
async def test_each_identifier_goes_to_the_parameter_its_word_names(
    request_text: str, tool: str, args: dict[str, str]
) -> None:
    # The tool whose whole name the request says ("check in") is the one; a
    # value written after "card" is the card number, whatever comes first.
    tools = [
        troupe.Tool(name="lend_check_out", description="Check out.", func=lend_check_out),
        troupe.Tool(name="lend_check_in", description="Check in.", func=lend_check_in),
    ]

    config = troupe.Config(tools=tools, model="offline", topology=LENDING)
    events = await _turn(config, request_text)

    calls = [e.get_function_calls() for e in events if e.get_function_calls()]
    made = [(c.name, c.args) for batch in calls for c in batch if c.name.startswith("lend_")]
    assert made == [(tool, args)]


def fee_balance(card_number: str) -> dict[str, str]:
    """What a card owes."""
    return {"card_number": card_number, "owes": "4.20"}


payments: list[str] = []


def fee_take_payment(card_number: str, amount: float) -> dict[str, str]:
    """Take a payment towards what a card owes."""
    payments.append(card_number)
    return {"card_number": card_number, "paid": str(amount)}


FEES = one_agent_team(
    "fees",
    "Fines and payments at the desk.",
    ("fee_", "fines and payments"),
    ("owe", "owes", "payment", "balance"),
)


async def test_asked_to_show_what_is_owed_the_stand_in_takes_no_payment() -> None:
    tools = [
        troupe.Tool(name="fee_take_payment", description="Take a payment.", func=fee_take_payment),
        troupe.Tool(name="fee_balance", description="What a card owes.", func=fee_balance),
    ]
    payments.clear()

    events = await _turn(
        troupe.Config(tools=tools, model="offline", topology=FEES),
        "Show me what card EL-248193 still owes.",
    )

    calls = _called(events)
    assert "fee_balance" in calls
    assert payments == []


taken_out: list[str] = []


def contract_new_contract(customer_id: str, serial_number: str) -> dict[str, str]:
    """Take out a maintenance contract (a year) for one of the customer's appliances, by
    its serial number, on the basic, comfort or premium maintenance plan."""
    taken_out.append(customer_id)
    return {"customer_id": customer_id, "contract": "MC-10001"}


def contract_customer_contracts(customer_id: str) -> dict[str, str]:
    """All contracts of a customer, active and expired."""
    return {"customer_id": customer_id, "contracts": "MC-55611"}


CONTRACTS = one_agent_team(
    "contracts",
    "Maintenance contracts for boilers and heat pumps.",
    ("contract_", "maintenance contracts"),
    ("contract", "maintenance contract"),
)


@pytest.mark.parametrize(
    "question",
    [
        "Show me which maintenance contracts customer C-35129 has.",
        "Which maintenance contracts do I have? I'm customer C-35129, serial VI25113928.",
        "Show me my maintenance contracts, customer C-35129, serial VI25113928.",
    ],
)
async def test_asked_which_contracts_there_are_the_stand_in_takes_out_none(question: str) -> None:
    tools = _documented(contract_new_contract, contract_customer_contracts)
    taken_out.clear()

    events = await _turn(troupe.Config(tools=tools, model="offline", topology=CONTRACTS), question)

    calls = _called(events)
    assert "contract_customer_contracts" in calls
    assert taken_out == []


cancelled_bookings: list[str] = []


def booking_cancel(booking_id: str) -> dict[str, str]:
    """Cancel a booking."""
    cancelled_bookings.append(booking_id)
    return {"booking_id": booking_id, "status": "cancelled"}


def booking_list(customer_id: str) -> dict[str, str]:
    """A customer's bookings."""
    return {"customer_id": customer_id, "bookings": "BK-10001"}


BOOKINGS = one_agent_team(
    "bookings", "Bookings of the desk.", ("booking_", "bookings"), ("booking", "bookings")
)


async def test_the_story_told_before_a_step_never_cancels_anything() -> None:
    tools = _documented(booking_cancel, booking_list)
    cancelled_bookings.clear()

    events = await _turn(
        troupe.Config(tools=tools, model="offline", topology=BOOKINGS),
        "My booking BK-10001 got cancelled by mistake. Show me my bookings, customer C-35129.",
    )

    calls = _called(events)
    assert "booking_list" in calls
    assert cancelled_bookings == []
