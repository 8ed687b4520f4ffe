"""How the offline stand-in reads a call's arguments from a request: each
value to the parameter its words name, from the schema it is given."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from troupe.models._offline_args import (
    argument_evidence,
    fill_arguments,
    named_value,
    parameter_notes,
)

HOLD: dict[str, Any] = {
    "properties": {
        "card_number": {"type": "string"},
        "title_id": {"type": "string"},
        "pickup_branch": {"type": "string"},
    },
    "required": ["card_number", "title_id", "pickup_branch"],
}


def test_each_identifier_and_name_goes_to_the_parameter_its_word_names() -> None:
    text = "place a hold on title T-48213 for card EL-219044, pickup at Oakley"

    args = fill_arguments(HOLD, text)

    assert args == {"card_number": "EL-219044", "title_id": "T-48213", "pickup_branch": "Oakley"}


def test_an_identifier_in_another_language_goes_by_its_accentless_word() -> None:
    schema = {"properties": {"event_id": {"type": "string"}, "card_number": {"type": "string"}}}

    args = fill_arguments(schema, "Inscris la carte EL-242618 à l'événement EV-1205-1")

    assert args == {"event_id": "EV-1205-1", "card_number": "EL-242618"}


def test_an_amount_is_never_read_out_of_an_identifier() -> None:
    schema = {"properties": {"card_number": {"type": "string"}, "amount": {"type": "number"}}}

    assert fill_arguments(schema, "what does card EL-248193 owe") == {"card_number": "EL-248193"}
    assert fill_arguments(schema, "take 18.50 from card EL-260371") == {
        "card_number": "EL-260371",
        "amount": 18.5,
    }


@pytest.mark.parametrize(
    ("text", "method"),
    [("pay 12 euros on contactless", "contactless"), ("pays en espèces: cash", "cash")],
)
def test_a_parameter_with_allowed_values_takes_the_one_the_request_names(
    text: str, method: str
) -> None:
    schema = {
        "properties": {"method": {"type": "string", "enum": ["cash", "card", "contactless"]}},
        "required": ["method"],
    }

    assert fill_arguments(schema, text) == {"method": method}


def test_a_parameter_with_allowed_values_none_of_which_is_named_is_left_out() -> None:
    schema = {
        "properties": {"method": {"type": "string", "enum": ["cash", "contactless"]}},
        "required": ["method"],
    }

    assert fill_arguments(schema, "take the payment please") == {}


def test_a_detail_between_commas_stays_with_its_step_in_a_plan() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute("cards", ("card number", "member")),
        TeamRoute("loans", ("loans", "on loan")),
    ]

    steps = _plan("Find the card number of Ana Lind, born 1979-10-30, and list her loans.", team)

    assert steps == [
        ("Find the card number of Ana Lind, born 1979-10-30", "cards"),
        ("list her loans", "loans"),
    ]


def test_the_comma_inside_a_number_splits_no_step_in_a_plan() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute("bookings", ("booking", "child seat")),
        TeamRoute("loyalty", ("points", "voucher")),
    ]

    steps = _plan("Add a child seat to RES-204817, and use 1,000 of my points for a voucher.", team)

    assert steps == [
        ("Add a child seat to RES-204817", "bookings"),
        ("use 1,000 of my points for a voucher", "loyalty"),
    ]


SHELL: dict[str, Any] = {
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}


def test_the_requests_own_words_are_never_run_as_a_command() -> None:
    from troupe.models._offline_args import argument_evidence

    text = "Show me what's in batches/batch_log.csv"

    assert "command" not in fill_arguments(SHELL, text)
    assert argument_evidence(SHELL, text) < 0
    assert fill_arguments(SHELL, "run `wc -l batches/batch_log.csv`") == {
        "command": "wc -l batches/batch_log.csv"
    }


SECRET_SET: dict[str, Any] = {
    "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    "required": ["name"],
}


@pytest.mark.parametrize(
    "text",
    [
        "Store my archive password 'Vaxjo1861' as the secret RIKSARKIVET_PASSWORD",
        "save 'Vaxjo1861' as secret riksarkivet_password",
    ],
)
def test_a_secret_is_stored_under_the_name_written_after_secret_never_its_value(
    text: str,
) -> None:
    args = fill_arguments(SECRET_SET, text)

    assert args["name"].upper() == "RIKSARKIVET_PASSWORD"
    assert args["name"] != "Vaxjo1861"


def test_two_identifiers_go_to_two_parameters_and_a_lettered_code_stays_whole() -> None:
    schema = {
        "properties": {"member_id": {"type": "string"}, "group_code": {"type": "string"}},
        "required": ["member_id", "group_code"],
    }

    args = fill_arguments(schema, "move M-22318 into the GRP-C2-04 crew")

    assert args == {"member_id": "M-22318", "group_code": "GRP-C2-04"}


def test_an_identifier_whose_letters_name_a_parameter_goes_there_before_a_bare_number() -> None:
    schema = {
        "properties": {"invoice_id": {"type": "string"}, "amount": {"type": "number"}},
        "required": ["invoice_id"],
    }

    args = fill_arguments(schema, "I paid the 345 I owed on INV-5521-2 yesterday")

    assert args == {"invoice_id": "INV-5521-2", "amount": 345.0}


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("book it for Thursday 5 February 2026", "2026-02-05"),
        ("book it for Feb 14th, 2026", "2026-02-14"),
        ("am 21.02.2026 bitte", "2026-02-21"),
        ("on 2026-03-01", "2026-03-01"),
    ],
)
def test_a_date_written_in_words_or_with_dots_is_given_as_year_month_day(
    text: str, day: str
) -> None:
    schema = {"properties": {"date": {"type": "string"}}, "required": ["date"]}

    assert fill_arguments(schema, text) == {"date": day}


def test_a_date_without_a_year_is_one_in_the_current_year() -> None:
    schema = {
        "properties": {"start_date": {"type": "string"}, "end_date": {"type": "string"}},
        "required": ["start_date", "end_date"],
    }
    year = datetime.date.today().year

    args = fill_arguments(schema, "a compact from 20 March to March 27th, please")

    assert args == {"start_date": f"{year}-03-20", "end_date": f"{year}-03-27"}


def test_may_as_a_verb_is_no_month() -> None:
    schema = {"properties": {"date": {"type": "string"}}, "required": ["date"]}

    assert "date" not in fill_arguments(schema, "may 5 people come to the tasting?")


def test_a_start_and_an_end_time_take_the_two_times_in_order() -> None:
    schema = {
        "properties": {"start_time": {"type": "string"}, "end_time": {"type": "string"}},
        "required": ["start_time", "end_time"],
    }

    args = fill_arguments(schema, "reserve the hall from 9h30 to 14:00")

    assert args == {"start_time": "09:30", "end_time": "14:00"}


def test_a_plan_step_without_the_identifier_takes_it_from_the_result_before_it() -> None:
    schema = {"properties": {"group_code": {"type": "string"}}, "required": ["group_code"]}
    previous = "member_id: M-22318\ngroup_code: GRP-C2-04\nstatus: joined"

    args = fill_arguments(schema, "tell me what that group costs", previous)

    assert args == {"group_code": "GRP-C2-04"}


def test_a_date_in_a_plan_step_is_no_identifier_the_result_before_it_gives_that() -> None:
    schema = {
        "properties": {"ticket_id": {"type": "string"}, "date": {"type": "string"}},
        "required": ["ticket_id", "date"],
    }
    previous = "ticket_id: RT-27514\nstatus: waiting for parts"

    args = fill_arguments(schema, "book a technician's visit for it on 2026-04-28", previous)

    assert args == {"ticket_id": "RT-27514", "date": "2026-04-28"}


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("list the files in jobs/x/target", "jobs/x/target"),
        ("what is in drafts/2024 now", "drafts/2024"),
        ("keep km/h and/or mph", None),
        ("the meeting is on 21/02/2026", None),
    ],
)
def test_a_relative_path_of_several_parts_is_a_path_and_a_slashed_pair_of_words_is_not(
    text: str, path: str | None
) -> None:
    schema = {"properties": {"path": {"type": "string"}}}

    assert fill_arguments(schema, text).get("path") == path


def test_a_required_code_the_request_does_not_write_is_left_out_not_made_of_its_words() -> None:
    schema = {
        "properties": {
            "amount": {"type": "number"},
            "from_currency": {"type": "string"},
            "to_currency": {"type": "string"},
        },
        "required": ["amount", "from_currency", "to_currency"],
    }

    args = fill_arguments(schema, "change 250 USD into the local money")

    assert args == {"amount": 250.0, "from_currency": "USD"}


_RESERVE = {
    "properties": {"system_id": {"type": "string"}, "reserve_percent": {"type": "integer"}},
    "required": ["system_id", "reserve_percent"],
}


def test_a_small_number_is_a_quantity_not_an_identifier() -> None:
    args = fill_arguments(
        _RESERVE,
        "lower its battery backup reserve to 10 %",
        previous="system_id: SYS-54312\nbattery:\n  capacity_kwh: 5.0",
    )
    assert args == {"system_id": "SYS-54312", "reserve_percent": 10}


def test_a_whole_number_is_never_read_out_of_a_reference() -> None:
    args = fill_arguments(_RESERVE, "set the reserve of SYS-54312 to 10 %")
    assert args == {"system_id": "SYS-54312", "reserve_percent": 10}
    counted = {"properties": {"order_id": {"type": "string"}, "quantity": {"type": "integer"}}}
    assert fill_arguments(counted, "order 48213, 3 more please") == {
        "order_id": "48213",
        "quantity": 3,
    }


def test_the_minutes_of_a_time_are_not_what_a_colon_introduces() -> None:
    schema = {"properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert fill_arguments(schema, "remember that the stand-up at 10:30 moved") == {
        "text": "the stand-up at 10:30 moved"
    }
    assert fill_arguments(schema, "save this: the build is green") == {"text": "the build is green"}


def test_an_event_to_log_is_stored_without_the_words_that_ask_for_it() -> None:
    schema = {"properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert fill_arguments(schema, "log an event that the backup was late") == {
        "text": "the backup was late"
    }


def test_a_number_glued_to_a_unit_is_not_read_as_its_whole_part() -> None:
    schema = {"properties": {"length": {"type": "number"}}}
    assert fill_arguments(schema, "the boat is 8.5m long") == {}
    assert fill_arguments(schema, "a berth for a boat of 8.5 m") == {"length": 8.5}


RSVP: dict[str, Any] = {
    "properties": {
        "event": {"type": "string", "description": "event number such as EV-305, or its title"},
        "member": {
            "type": "string",
            "description": "member number such as M-2041, or the member's e-mail",
        },
        "item": {"type": "string", "description": "item number: PK-#### (parcel)"},
    },
    "required": ["event", "member"],
}


def test_an_identifier_goes_to_the_parameter_whose_description_shows_its_shape() -> None:
    text = "Book me in (M-2041) and then sign me up for pitch practice night, EV-305, PK-5008"

    args = fill_arguments(RSVP, text)

    assert args == {"event": "EV-305", "member": "M-2041", "item": "PK-5008"}


def test_a_parameter_that_takes_an_e_mail_too_takes_it_when_no_identifier_is_given() -> None:
    args = fill_arguments(RSVP, "sign me up for EV-305, my address is lucia@example.com")

    assert args == {"event": "EV-305", "member": "lucia@example.com"}


def test_an_identifier_of_another_shape_is_never_the_value_of_a_shaped_parameter() -> None:
    args = fill_arguments(RSVP, "sign me up for the yoga session, member M-2041")

    assert args.get("event") != "M-2041"
    assert args["member"] == "M-2041"


EXTRA: dict[str, Any] = {
    "properties": {
        "reservation_id": {"type": "string"},
        "extra": {"type": "string"},
        "quantity": {"type": "integer"},
    },
    "required": ["reservation_id", "extra"],
}
EXTRAS = "Add an extra to a booking: child_seat, booster_seat, sat_nav or roof_box."


def test_a_value_the_tool_lists_is_taken_when_the_request_names_it_in_words() -> None:
    args = fill_arguments(EXTRA, "Add a child seat to RES-204817", described=EXTRAS)

    assert args == {"reservation_id": "RES-204817", "extra": "child_seat"}


def test_a_value_the_tool_does_not_list_is_asked_for_never_made_of_the_request() -> None:
    args = fill_arguments(EXTRA, "Add a baby carrier to RES-204817", described=EXTRAS)

    assert "extra" not in args


def test_the_tools_own_parameters_named_in_its_description_are_no_values() -> None:
    text_param = {"type": "string"}
    schema: dict[str, Any] = {
        "properties": {
            "name": text_param,
            "value": text_param,
            "from_env": text_param,
            "from_file": text_param,
        },
        "required": ["value"],
    }
    described = "Store a secret; give value, or from_env, or from_file."

    args = fill_arguments(schema, "store hunter2 as a secret", described=described)

    assert args.get("value")


def test_a_last_sentence_that_only_names_the_member_is_a_detail_of_every_step() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [TeamRoute("guests", ("guest",)), TeamRoute("rooms", ("book", "room"))]

    steps = _plan(
        "Register my guest Jamal Reed for 18 March, and book Oak from 10:00 to 11:00. M-2041",
        team,
    )

    assert steps == [
        ("Register my guest Jamal Reed for 18 March (M-2041)", "guests"),
        ("book Oak from 10:00 to 11:00 (M-2041)", "rooms"),
    ]


def test_a_step_takes_an_identifier_from_the_result_before_under_its_longer_key() -> None:
    schema = {
        "properties": {"member": {"type": "string", "description": "member number such as M-2041"}},
        "required": ["member"],
    }
    previous = "member_id: M-2115\nname: Sam Okafor\nplan: private_office"

    args = fill_arguments(schema, "list any invoices I haven't paid yet", previous)

    assert args == {"member": "M-2115"}


def test_one_identifier_counts_for_one_parameter_when_a_tool_is_chosen() -> None:
    from troupe.models._offline_args import argument_evidence

    quote = {
        "properties": {
            "from_postcode": {"type": "string"},
            "to_postcode": {"type": "string"},
            "account_number": {"type": "string"},
        },
        "required": ["from_postcode", "to_postcode"],
    }
    invoices = {
        "properties": {"account_number": {"type": "string"}},
        "required": ["account_number"],
    }
    text = "send me the open invoices for account AC-47018"

    assert argument_evidence(invoices, text) > argument_evidence(quote, text)


def test_a_sentence_that_tells_what_happened_is_no_step_but_goes_with_the_steps_after() -> None:
    from troupe.models.offline import _own_steps, _plan
    from troupe.models.team_view import TeamRoute

    team = [TeamRoute("towing", ("towed", "pound")), TeamRoute("fines", ("pcn", "appeal"))]
    text = "My car WX21 ZPA was towed. Find out which pound has it, then appeal PCN BX56911734."

    assert _plan(text, team) == [
        ("Find out which pound has it (told: My car WX21 ZPA was towed)", "towing"),
        ("appeal PCN BX56911734 (told: My car WX21 ZPA was towed)", "fines"),
    ]
    assert _own_steps(text)[0] == "Find out which pound has it (told: My car WX21 ZPA was towed)"


def test_a_story_never_asks_for_an_effect_that_cannot_be_taken_back() -> None:
    from troupe.models.offline import _may_call

    assert not _may_call("booking_cancel", "Show me my bookings")
    assert not _may_call("booking_cancel", "Show me what got cancelled")
    assert not _may_call("booking_cancel", "My booking BK-10001 got cancelled by mistake")
    assert _may_call("booking_cancel", "Cancel booking BK-10001")


def test_a_step_before_and_after_that_keeps_no_trailing_comma() -> None:
    from troupe.models.offline import _own_steps

    steps = _own_steps("Cancel pickup PU-133349, and after that send me the open invoices.")

    assert steps == ["Cancel pickup PU-133349", "send me the open invoices"]


def test_a_question_then_a_sentence_that_asks_for_more_are_two_steps() -> None:
    from troupe.models.offline import _own_steps

    steps = _own_steps("What's happening with claim CLM-46244? And add a note to it, please.")

    assert steps == ["What's happening with claim CLM-46244", "And add a note to it, please"]


def _fenced(description: str) -> str:
    """A description as ADK hands an MCP server's to the model: fenced as untrusted."""
    return (
        "<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>\n"
        f"{description}\n<<<END_UNTRUSTED_TOOL_DESCRIPTION>>>"
    )


GROOMING: dict[str, Any] = {
    "properties": {
        "dog_id": {"type": "string", "description": _fenced("DOG- and 4 digits, e.g. DOG-2317.")},
        "check_in": {"type": "string", "description": _fenced("A date written YYYY-MM-DD.")},
        "check_out": {"type": "string", "description": _fenced("A date written YYYY-MM-DD.")},
        "start": {"type": "string", "description": _fenced("On a 24-hour clock, e.g. 09:30.")},
        "service": {
            "type": "string",
            "description": _fenced("bath and brush, full groom, nail trim or de-shedding"),
        },
    },
    "required": ["dog_id", "check_in", "check_out", "start", "service"],
}


def test_a_value_a_description_lists_in_plain_words_is_taken_when_named() -> None:
    args = fill_arguments(
        GROOMING, "Book DOG-2657 a de-shedding from 6 to 10 April 2026, 09:00 on arrival"
    )

    assert args == {
        "dog_id": "DOG-2657",
        "check_in": "2026-04-06",
        "check_out": "2026-04-10",
        "start": "09:00",
        "service": "de-shedding",
    }


def test_a_value_a_plain_list_does_not_hold_is_asked_for_not_made_of_the_request() -> None:
    args = fill_arguments(GROOMING, "Book DOG-2657 a haircut on 6 April 2026 at 09:00")

    assert "service" not in args
    assert "check_out" not in args  # one date for two: the second is asked for


def test_a_description_that_is_more_than_a_list_names_no_values() -> None:
    schema: dict[str, Any] = {
        "properties": {"food": {"type": "string", "description": "What it eats, e.g. raw or dry."}},
        "required": ["food"],
    }

    assert fill_arguments(schema, "she eats raw chicken") == {"food": "she eats raw chicken"}


FIRING: dict[str, Any] = {
    "properties": {
        "kiln": {"type": "string"},
        "date": {"type": "string"},
        "start_hour": {"type": "integer"},
        "hours": {"type": "integer"},
        "potter_name": {"type": "string"},
    },
    "required": ["kiln", "date", "start_hour", "hours", "potter_name"],
}
FIRING_TOOL = (
    "Reserve a kiln for a potter: kiln id (KL-1..KL-4) or name, date YYYY-MM-DD, start_hour "
    "on the 24-hour clock and the firing's length in hours. Returns an FR- id."
)


def test_a_shape_the_tool_description_gives_a_parameter_picks_its_value() -> None:
    text = "Reserve Big Kiln B (KL-3) on 2026-06-03 from 11:00 for 5 hours for Juniper Collective"

    args = fill_arguments(FIRING, text, described=FIRING_TOOL)

    assert args == {
        "kiln": "KL-3",
        "date": "2026-06-03",
        "start_hour": 11,
        "hours": 5,
        "potter_name": "Juniper Collective",
    }


def test_each_shape_in_one_description_goes_to_the_parameter_named_before_it() -> None:
    schema: dict[str, Any] = {
        "properties": {"class_booking": {"type": "string"}, "tutor": {"type": "string"}},
        "required": ["class_booking", "tutor"],
    }
    described = "Put a tutor (id such as TU-4 or a name) on a class booking (CB- and four digits)."

    args = fill_arguments(schema, "Setzen Sie Mira (TU-2) auf die Buchung CB-1011", None, described)

    assert args == {"class_booking": "CB-1011", "tutor": "TU-2"}


def test_a_word_that_only_looks_like_an_identifier_is_not_taken_for_a_shaped_one() -> None:
    schema: dict[str, Any] = {
        "properties": {"glaze_id": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["glaze_id", "days"],
    }
    described = "Whether a glaze (GL- id) can be borrowed for a number of days."

    args = fill_arguments(schema, "is the C30 celadon GL-204 free for 2 days?", None, described)

    assert args == {"glaze_id": "GL-204", "days": 2}


def test_numbers_of_a_date_or_a_time_s_minutes_are_no_counts() -> None:
    schema: dict[str, Any] = {
        "properties": {
            "date": {"type": "string"},
            "adults": {"type": "integer"},
            "students": {"type": "integer"},
            "children": {"type": "integer"},
        },
        "required": ["date"],
    }

    args = fill_arguments(schema, "book 2 student places on Wednesday 18 March 2026 at 10:30")

    # No other number is left: the day and the year are the date's, 30 the time's.
    assert args == {"date": "2026-03-18", "students": 2}


def test_a_later_step_that_says_that_day_takes_the_date_the_step_before_gave() -> None:
    schema: dict[str, Any] = {
        "properties": {"date": {"type": "string"}},
        "required": ["date"],
    }
    previous = "firing_id: FR-1013\nkiln: KL-2\ndate: 2026-06-03\nfrom: 11:00"

    args = fill_arguments(schema, "tell me which tutors are in that day", previous)

    assert args == {"date": "2026-06-03"}


def test_a_tool_whose_described_shape_the_identifier_does_not_fit_has_less_evidence() -> None:
    schema: dict[str, Any] = {
        "properties": {"kiln_id": {"type": "string"}, "date": {"type": "string"}},
        "required": ["kiln_id", "date"],
    }
    text = "Cancel my firing FR-54833"

    fitting = argument_evidence(
        {"properties": {"firing": {"type": "string"}}, "required": ["firing"]},
        text,
        "Cancel a firing (FR- and five digits).",
    )
    other = argument_evidence(schema, text, "Reserve a kiln (KL-1..KL-4) on a date (YYYY-MM-DD).")

    assert fitting > other


def test_an_identifier_the_step_before_gave_counts_as_the_step_s_own() -> None:
    schema: dict[str, Any] = {
        "properties": {"customer_id": {"type": "string"}},
        "required": ["customer_id"],
    }
    text = "then show me which maintenance contracts I have"

    alone = argument_evidence(schema, text)
    after = argument_evidence(schema, text, previous="customer_id: C-35129\ninvoices: 2")

    assert (alone, after) == (-2, 2)


def test_an_error_that_quotes_the_refused_value_lists_the_values_it_takes() -> None:
    from troupe.models._offline_args import named_value, values_an_error_lists

    error = "method 'Pay it by card' is not one of: bancontact, bank transfer, card. (server said"

    listed = values_an_error_lists(error, "Pay it by card")

    assert listed == ["bancontact", "bank transfer", "card"]
    assert named_value(listed, "Pay it by card") == "card"
    assert named_value(["great-barn", "orangery"], "hold the Great Barn") == "great-barn"


def test_an_error_about_another_value_lists_nothing_for_this_one() -> None:
    from troupe.models._offline_args import values_an_error_lists

    error = "method 'Pay INV-472030 by card' is not one of: bancontact, bank transfer, card."

    assert values_an_error_lists(error, "INV-472030") == []
    assert values_an_error_lists("ticket_id '2026-04-28' is not valid.", "2026-04-28") == []


def test_a_value_in_the_shape_of_its_descriptions_example_fills_the_parameter() -> None:
    schema: dict[str, Any] = {
        "properties": {"username": {"type": "string"}, "mac": {"type": "string"}},
        "required": ["username", "mac"],
    }
    schema["properties"]["mac"]["description"] = "The device's MAC address, e.g. 3C:22:FB:9A:10:7E"
    described = "Register a device for a university account (username such as mk2291)."

    args = fill_arguments(
        schema, "please add 00:1A:2B:3C:4D:5E to my devices, I'm tob1156", None, described
    )

    assert args == {"username": "tob1156", "mac": "00:1A:2B:3C:4D:5E"}


def test_a_parameter_with_an_example_is_asked_for_not_filled_with_the_request() -> None:
    schema: dict[str, Any] = {
        "properties": {"username": {"type": "string"}},
        "required": ["username"],
    }
    described = "Unlock a university account (username such as mk2291)."

    args = fill_arguments(schema, "my account is locked, can you unlock it?", None, described)

    assert args == {}  # asked for: the request's own words are no username


def test_a_request_that_writes_the_example_shaped_value_is_evidence_for_the_tool() -> None:
    schema: dict[str, Any] = {
        "properties": {"username": {"type": "string"}},
        "required": ["username"],
    }
    described = "Unlock a university account (username such as mk2291)."

    given = argument_evidence(schema, "unlock fa1190 please", described)
    not_given = argument_evidence(schema, "unlock my account please", described)

    assert given > not_given


def test_a_value_listed_with_what_it_stands_for_is_named_by_either() -> None:
    from troupe.models._offline_args import named_value, values_an_error_lists

    asked = "is the wifi working in Meadow Halls?"
    error = (
        f"building '{asked}' is not a campus building: use one of LIB (Harland Library), "
        "BUS (Business School), MH (Meadow Halls). (server said: ...)"
    )

    listed = values_an_error_lists(error, asked)

    assert named_value(listed, asked) == "MH"
    assert named_value(listed, "the wifi in BUS is down") == "BUS"
    assert named_value(listed, "the wifi in the gym is down") is None


HIRE_DESCRIPTION = """Hire out a bike for a day and price it.

    frame: the frame tag (e.g. QX41 BRT); bike_type: road, gravel, tandem_bike
    (two riders; book it a day ahead) or cargo; stations: from_station, to_station:
    station names (Mill Lane, Harbour, Old Quay, Northgate).
    """
HIRE: dict[str, Any] = {
    "properties": {
        "frame": {"type": "string"},
        "bike_type": {"type": "string"},
        "from_station": {"type": "string"},
        "to_station": {"type": "string"},
    },
    "required": ["frame", "bike_type", "from_station", "to_station"],
}


def test_a_parameter_takes_what_its_tools_docstring_says_of_it_after_its_name() -> None:
    text = "hire QX52 TLM as a gravel bike from Harbour to Mill Lane"

    args = fill_arguments(HIRE, text, described=HIRE_DESCRIPTION)

    assert args["frame"] == "QX52 TLM"
    assert args["bike_type"] == "gravel"


def test_two_parameters_listing_the_same_names_take_them_in_the_order_written() -> None:
    text = "hire QX52 TLM, road, Old Quay to Harbour"

    args = fill_arguments(HIRE, text, described=HIRE_DESCRIPTION)

    assert (args["from_station"], args["to_station"]) == ("Old Quay", "Harbour")


def test_a_docstring_note_ends_at_its_semicolon_but_not_inside_brackets() -> None:
    notes = parameter_notes(HIRE_DESCRIPTION, list(HIRE["properties"]))

    assert notes["frame"] == "the frame tag (e.g. QX41 BRT)"
    assert notes["bike_type"].endswith("or cargo")
    assert notes["to_station"] == notes["from_station"]


def test_a_number_written_with_a_unit_goes_to_the_parameter_measured_in_it() -> None:
    schema = {
        "properties": {"load_kg": {"type": "number"}, "distance": {"type": "number"}},
        "required": ["load_kg", "distance"],
    }
    described = "load_kg: the load; distance: how far, in kilometres."

    args = fill_arguments(schema, "a trip of 14 km carrying 30 kg", described=described)

    assert args == {"load_kg": 30.0, "distance": 14.0}


def test_a_value_another_argument_holds_is_not_named_twice() -> None:
    stations = ["Mill Lane", "Harbour", "Old Quay"]
    text = "von Harbour nach Old Quay"

    assert named_value(stations, text) == "Harbour"
    assert named_value(stations, text, taken=["Harbour"]) == "Old Quay"


def test_a_name_in_snake_case_after_as_names_what_is_stored() -> None:
    schema = {"properties": {"name": {"type": "string"}, "value": {"type": "string"}}}

    args = fill_arguments(schema, "keep 'x9-long-token' in the vault as deploy_token.")

    assert args["name"] == "deploy_token"


def test_a_parameter_named_for_one_end_of_a_date_range_is_never_the_request_s_words() -> None:
    schema = {
        "type": "object",
        "properties": {"date_from": {"type": "string"}, "date_to": {"type": "string"}},
        "required": ["date_from"],
    }
    assert fill_arguments(schema, "Can you give me the running time") == {}
    assert fill_arguments(schema, "What's on from 2026-06-02 to 2026-06-06?") == {
        "date_from": "2026-06-02",
        "date_to": "2026-06-06",
    }
