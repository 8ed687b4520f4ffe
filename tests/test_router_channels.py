"""A request that asks for a channel no agent of the team has (an SMS, a
WhatsApp, a printer, a taxi, an e-mail to send) is nobody's work, whatever
agent's subject it names: the router names no agent and the model is told
so. On a team with an agent for that channel, it is that agent's."""

from __future__ import annotations

import pytest

from troupe.routing.encoder import Encoder
from troupe.routing.router import AgentProfile, Router


def _restaurant(texting: bool, calling: bool = False) -> list[AgentProfile]:
    team = [
        AgentProfile.build(
            "host",
            texts=["Takes table reservations (R-#####) and seats guests."],
            keywords=["reservation", "table", "booking", "guest"],
            tool_names=["host_book_table", "host_find_reservation"],
            parameter_names=["reservation_id", "guests"],
        ),
        AgentProfile.build(
            "kitchen",
            texts=["Knows the menu, its dishes and their allergens."],
            keywords=["menu", "dish", "allergen"],
            tool_names=["kitchen_dish_allergens", "kitchen_menu"],
            parameter_names=["dish"],
        ),
        AgentProfile.build(
            "accounts",
            # "corrects" shares its first five letters with "correo" (mail).
            texts=["Records what the restaurant spends and corrects wrong entries."],
            keywords=["expense", "receipt", "spent", "paid"],
            tool_names=["accounts_record_expense"],
            parameter_names=["amount", "category"],
        ),
    ]
    extra = {
        "messenger": (texting, "Sends text messages to guests.", ["sms", "text message"]),
        "phones": (calling, "Calls guests on the phone.", ["call", "phone"]),
    }
    for name, (wanted, text, words) in extra.items():
        if wanted:
            team.append(
                AgentProfile.build(
                    name,
                    texts=[text],
                    keywords=words,
                    tool_names=[f"{name}_send_{words[0]}"],
                    parameter_names=["phone", "text"],
                )
            )
    return team


@pytest.mark.parametrize(
    "text",
    [
        "Schick dem Gast von Reservierung R-40213 eine SMS, dass sich sein Tisch verschiebt.",
        "Send the guests of tonight's reservations a WhatsApp about the later start.",
        "Print tonight's menu on the office printer.",
        "Call a taxi for the guest at table 3.",
        "Send an email to the guest of reservation R-40213 saying the table is ready.",
        "Send a text message to the guest of R-40213 saying the table is ready.",
        "Put reservation R-40213 in my Google Calendar for Friday.",
        "Give the guests of R-40213 a phone call about the later start.",
        "Phone the guest of reservation R-40213 and tell him the table is ready.",
        "Can you call the guest of R-40213 about the later start?",
        "Llama al cliente de la reserva R-40213 y dile que la mesa está lista.",
        "Post a letter to the guest of R-40213 about the later start.",
        "Envía un correo al cliente de la reserva R-40213: la mesa está lista.",
        "Fax tonight's menu to the wine supplier.",
        "Email the guests of R-40213 that the table is ready.",
        "Pon una alarma en mi móvil para las 18:00, antes de la reserva R-40213.",
    ],
)
def test_a_channel_nobody_has_is_nobody_s_work(encoder: Encoder, text: str) -> None:
    decision = Router(_restaurant(texting=False), encoder).decide(text)

    assert (decision.kind, decision.agent, decision.nobody) == ("defer", None, True)


@pytest.mark.parametrize(
    "text",
    [
        "Send an SMS to all of tonight's guests saying we open an hour late.",
        "Send a text message to all of tonight's guests saying we open an hour late.",
    ],
)
def test_on_a_team_that_texts_an_sms_is_its_messenger_s(encoder: Encoder, text: str) -> None:
    decision = Router(_restaurant(texting=True), encoder).decide(text)

    assert decision.nobody is False
    assert decision.candidates[0].name == "messenger"


@pytest.mark.parametrize(
    ("text", "agent"),
    [
        ("I just paid 18 euros for a taxi to the market, put it down as an expense.", "accounts"),
        ("The guest's email is ana@example.com: add it to reservation R-40213.", "host"),
        ("Email address of the guest on R-40213 is ana@example.com, please add it.", "host"),
        ("What do you call a dish with no meat in it?", "kitchen"),
        ("Call the new dish on the menu 'Nordic bowl'.", "kitchen"),
        ("Call it 'Nordic bowl' on tonight's menu.", "kitchen"),
    ],
)
def test_a_channel_the_request_only_mentions_does_not_stop_a_route(
    encoder: Encoder, text: str, agent: str
) -> None:
    decision = Router(_restaurant(texting=False), encoder).decide(text)

    assert decision.nobody is False
    assert decision.candidates[0].name == agent


def test_on_a_team_with_a_phone_desk_a_call_is_its_work(encoder: Encoder) -> None:
    decision = Router(_restaurant(texting=False, calling=True), encoder).decide(
        "Call the guest of R-40213 about the later start."
    )

    assert decision.nobody is False
    # The reservation's number is the host's thing too (a one-letter shape,
    # half a sign): the router leaves the choice to the model, never to the host.
    assert decision.kind == "defer" or decision.agent == "phones"
    assert {c.name for c in decision.candidates[:2]} == {"phones", "host"}


def test_a_channel_said_in_another_language_is_the_teams_when_it_has_it(
    encoder: Encoder,
) -> None:
    printing = AgentProfile.build(
        "printing",
        texts=["Says whether a printer (PRN-###) works and how much print credit is left."],
        keywords=["printer", "print credit", "print job"],
        tool_names=["print_printer_status", "print_credit_balance"],
        parameter_names=["printer", "username"],
    )
    team = [*_restaurant(texting=False), printing]

    decision = Router(team, encoder).decide("La stampante PRN-331 è di nuovo inceppata?")
    without = Router(_restaurant(texting=False), encoder).decide(
        "La stampante della cucina è di nuovo inceppata?"
    )

    assert decision.nobody is False
    assert decision.candidates[0].name == "printing"
    assert without.nobody is True
