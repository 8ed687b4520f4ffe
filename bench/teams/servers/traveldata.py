"""The fake travel service's shared data: the cities it knows and their currencies.

A city is known by its English name, a local name (Lisboa, München) or its
airport's IATA code; accents and case do not matter.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import fake_backend as fb


@dataclass(frozen=True)
class City:
    name: str
    country: str
    airport: str  # IATA code of the airport that serves it
    currency: str
    jan_c: float  # mean temperature in January, in °C
    jul_c: float  # mean temperature in July, in °C
    rainy_days: int  # rainy days in an average month


_ROWS = """
Lisbon|PT|LIS|EUR|11.5|23.5|8|Lisboa,Lissabon,Lisbonne
Porto|PT|OPO|EUR|9.5|20.5|11|Oporto
Madrid|ES|MAD|EUR|6.5|26|5|
Barcelona|ES|BCN|EUR|10|25|6|Barcelone
Seville|ES|SVQ|EUR|11|28.5|5|Sevilla,Séville
Paris|FR|CDG|EUR|5|20.5|10|
Nice|FR|NCE|EUR|9|24|6|
Lyon|FR|LYS|EUR|3.5|22|9|
Berlin|DE|BER|EUR|0.5|19.5|10|
Munich|DE|MUC|EUR|-1|19|12|München,Muenchen
Hamburg|DE|HAM|EUR|1.5|18|12|
Frankfurt|DE|FRA|EUR|1.5|20|10|
Cologne|DE|CGN|EUR|2.5|19|11|Köln,Koeln
Vienna|AT|VIE|EUR|0|20.5|9|Wien,Viena,Vienne
Zurich|CH|ZRH|CHF|0|18.5|12|Zürich
Geneva|CH|GVA|CHF|1.5|20|10|Genève,Genf,Ginebra
Rome|IT|FCO|EUR|8|25|7|Roma,Rom
Milan|IT|MXP|EUR|2.5|24|8|Milano,Mailand
Venice|IT|VCE|EUR|3.5|23.5|8|Venezia,Venedig,Venecia,Veneza
Florence|IT|FLR|EUR|6|25|8|Firenze,Florenz,Florencia,Florença
Naples|IT|NAP|EUR|9|24.5|8|Napoli,Neapel,Nápoles
Amsterdam|NL|AMS|EUR|3.5|17.5|13|
Brussels|BE|BRU|EUR|3.5|18|12|Bruxelles,Brüssel,Bruselas
London|GB|LHR|GBP|5|18.5|11|Londres,Londra
Edinburgh|GB|EDI|GBP|4|15|12|
Dublin|IE|DUB|EUR|5.5|15.5|12|
Copenhagen|DK|CPH|DKK|1.5|17.5|10|Kopenhagen,København,Copenhague
Stockholm|SE|ARN|SEK|-1.5|18|9|Estocolmo
Oslo|NO|OSL|NOK|-3|17|10|
Helsinki|FI|HEL|EUR|-4|18|10|
Reykjavik|IS|KEF|ISK|0|11.5|15|Reykjavík
Prague|CZ|PRG|CZK|-0.5|19.5|9|Praha,Prag,Praga
Budapest|HU|BUD|HUF|0|22|8|
Warsaw|PL|WAW|PLN|-1.5|19.5|9|Warschau,Varsovia,Varsóvia
Krakow|PL|KRK|PLN|-2|19|10|Kraków,Krakau,Cracovia
Athens|GR|ATH|EUR|10|28|5|Athen,Atenas,Athènes,Athina
Istanbul|TR|IST|TRY|6|24.5|8|Estambul
Marrakesh|MA|RAK|MAD|12|29|4|Marrakech,Marrakesch,Marraquexe
Dubai|AE|DXB|AED|19|35|1|
New York|US|JFK|USD|0.5|25|10|Nueva York,Nova Iorque
Boston|US|BOS|USD|-1.5|23|10|
Chicago|US|ORD|USD|-4|24|10|
San Francisco|US|SFO|USD|11|17|5|
Los Angeles|US|LAX|USD|14.5|22|3|
Toronto|CA|YYZ|CAD|-5.5|22|11|
Montreal|CA|YUL|CAD|-9.5|21|12|Montréal
Mexico City|MX|MEX|MXN|14|17.5|12|Ciudad de México,CDMX
Sao Paulo|BR|GRU|BRL|23|17.5|10|São Paulo
Rio de Janeiro|BR|GIG|BRL|27|22|9|Rio
Buenos Aires|AR|EZE|ARS|24.5|11|8|
Tokyo|JP|HND|JPY|5.5|26|9|Tokio,Tóquio,Tōkyō
Osaka|JP|KIX|JPY|6|27.5|9|
Kyoto|JP|KIX|JPY|4.5|27.5|10|Quioto
Seoul|KR|ICN|KRW|-2.5|25|9|Seúl,Séoul
Singapore|SG|SIN|SGD|26.5|28|14|Singapur,Singapura
Bangkok|TH|BKK|THB|27|29|10|Banguecoque
Sydney|AU|SYD|AUD|23|13|11|Sídney
Melbourne|AU|MEL|AUD|20.5|10.5|10|
Cape Town|ZA|CPT|ZAR|21.5|12.5|7|Kapstadt,Ciudad del Cabo
"""


def _fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text)
    return "".join(c for c in plain if not unicodedata.combining(c)).strip().lower()


CITIES: dict[str, City] = {}
_LOOKUP: dict[str, City] = {}
for _row in _ROWS.strip().splitlines():
    _name, _country, _iata, _cur, _jan, _jul, _rain, _aliases = _row.split("|")
    _city = City(_name, _country, _iata, _cur, float(_jan), float(_jul), int(_rain))
    CITIES[_name] = _city
    for _key in (_name, *[a for a in _aliases.split(",") if a]):
        _LOOKUP[_fold(_key)] = _city
    _LOOKUP.setdefault(_fold(_iata), _city)

# Made-up exchange rates: units of each currency for one euro.
RATES: dict[str, float] = {
    "EUR": 1.0,
    "USD": 1.08,
    "GBP": 0.85,
    "CHF": 0.95,
    "JPY": 162.0,
    "SEK": 11.4,
    "NOK": 11.6,
    "DKK": 7.46,
    "ISK": 150.0,
    "CZK": 25.2,
    "HUF": 395.0,
    "PLN": 4.32,
    "TRY": 35.0,
    "MAD": 10.8,
    "AED": 3.97,
    "CAD": 1.47,
    "MXN": 19.5,
    "BRL": 5.9,
    "ARS": 980.0,
    "KRW": 1480.0,
    "SGD": 1.45,
    "THB": 38.5,
    "AUD": 1.64,
    "ZAR": 19.8,
    "CNY": 7.8,
    "INR": 90.0,
}


def city(name: str, field: str = "city") -> City:
    """The city ``name`` names (English or local name, or IATA code)."""
    text = fb.need_text(field, name, max_len=60)
    found = _LOOKUP.get(_fold(text.split(",")[0]))
    if found is None:
        raise fb.InputError(
            f"{field} {name!r} is not a city this service knows: give the city's name "
            "(e.g. Lisbon, New York) or its airport's 3-letter IATA code (e.g. LIS)."
        )
    return found
