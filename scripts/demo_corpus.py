"""The demo model's synthetic conversations: tools, requests, answers.

`make_corpus` writes the training set; `evaluation_samples` writes prompts
for `evaluate_demo_model.py` from value pools the training set never uses
(other cities, topics, titles, chat questions), so a held-out prompt differs
from every training prompt in its values, not only in its combination.

A sample is a dict:

- `messages`: the whole conversation; the last message is the assistant turn
  the model is trained to write (the prompt is everything before it);
- `tools`: the offered tool schemas, as for `apply_chat_template(tools=...)`;
- `enable_thinking`: whether the prompt pre-writes `<think>` (every assistant
  turn then carries 2-4 sentences of `reasoning_content`);
- `kind`: what the last turn does: "call" (one tool call), "parallel" (two),
  "answer" (answers from tool results, a second assistant turn), "chat"
  (plain text) or "missing" (no offered tool fits: says so in text).

Content is 1-3 sentences; a call turn starts with 1-2 sentences of text
about half the time. Reasoning names the offered tools before it picks one
(or finds that none fits). Everything is drawn from a `random.Random`, so a
seed gives the same samples on every machine.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


# Two tools exist in two schemas (get_weather with and without `unit`,
# set_alarm with a clock string or hour and minutes), so the model learns to
# fill in the schema it is given rather than the name alone. The "weather",
# "event" and "alarm" schemas are the project's example tools, which the
# samples and the app's Generate live tab offer.
TOOLS = {
    "weather": _tool(
        "get_weather",
        "Weather forecast for a city.",
        {"city": {"type": "string"}, "days": {"type": "integer"}},
        ["city"],
    ),
    "weather_unit": _tool(
        "get_weather",
        "Weather forecast for a city.",
        {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        ["city"],
    ),
    "event": _tool(
        "create_event",
        "Create a calendar event.",
        {"title": {"type": "string"}, "details": {"type": "object"}, "notify": {"type": "boolean"}},
        ["title"],
    ),
    "alarm": _tool(
        "set_alarm",
        "Set an alarm.",
        {
            "hour": {"type": "integer"},
            "minutes": {"type": "integer"},
            "enabled": {"type": "boolean"},
            "label": {"type": "string"},
        },
        ["hour"],
    ),
    "alarm_clock": _tool(
        "set_alarm",
        "Set an alarm.",
        {
            "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "label": {"type": "string"},
            "days": {
                "type": "array",
                "items": {
                    "type": "string",
                    "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                },
            },
            "options": {
                "type": "object",
                "properties": {
                    "snooze_minutes": {"type": "integer"},
                    "vibrate": {"type": "boolean"},
                },
            },
        },
        ["time"],
    ),
    "time": _tool(
        "get_time", "Current local time in a city.", {"city": {"type": "string"}}, ["city"]
    ),
    "convert": _tool(
        "convert_units",
        "Convert a value between units.",
        {
            "value": {"type": "number"},
            "from_unit": {"type": "string"},
            "to_unit": {"type": "string"},
        },
        ["value", "from_unit", "to_unit"],
    ),
    "search": _tool(
        "web_search",
        "Search the web.",
        {
            "query": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 10},
            "safe_search": {"type": "boolean"},
        },
        ["query"],
    ),
}
# What a tool is for, in words: "I can <ability>".
ABILITIES = {
    "get_weather": "check the weather",
    "get_time": "tell the local time",
    "convert_units": "convert units",
    "web_search": "search the web",
    "set_alarm": "set alarms",
    "create_event": "create calendar events",
}
# Schemas that cannot be offered together (one name, two schemas).
_SAME_NAME = {key: TOOLS[key]["function"]["name"] for key in TOOLS}


@dataclass(frozen=True)
class ValuePool:
    """The values requests are written with; training and evaluation use disjoint pools."""

    cities: tuple[str, ...]
    topics: tuple[str, ...]
    titles: tuple[str, ...]
    places: tuple[str, ...]
    labels: tuple[str, ...]
    chat: tuple[tuple[str, str], ...]  # (question, answer of 1-3 sentences)
    invent_names: bool  # also make up city names from syllables (teaches copying)


TRAINING_VALUES = ValuePool(
    cities=(
        "Paris",
        "London",
        "Berlin",
        "Madrid",
        "Rome",
        "Lisbon",
        "Oslo",
        "Dublin",
        "Chicago",
        "Boston",
        "Sydney",
        "Cairo",
        "Lagos",
        "Lima",
        "Seoul",
        "Toronto",
        "Vienna",
        "Prague",
        "Athens",
        "Denver",
        "Miami",
        "Austin",
        "Mumbai",
        "Delhi",
        "Jakarta",
        "Manila",
        "Santiago",
        "Quito",
        "Havana",
        "Accra",
        "Dakar",
        "Tunis",
        "Helsinki",
        "Warsaw",
        "Budapest",
        "Milan",
        "Naples",
        "Geneva",
        "Seattle",
        "Phoenix",
        "New York",
        "Los Angeles",
        "Hong Kong",
        "Buenos Aires",
        "Cape Town",
        "Rio de Janeiro",
        "São Paulo",
        "東京",
        "Zürich",
        "Kraków",
        "München",
        "Montréal",
        "Reykjavík",
        "Bogotá",
        "Québec",
        "大阪",
        "Malmö",
        "İstanbul",
        "Córdoba",
        "Düsseldorf",
        "北京",
        "서울",
    ),
    topics=(
        "python generators",
        "the history of tea",
        "electric cars",
        "how bees make honey",
        "black holes",
        "sourdough bread",
        "the Roman empire",
        "jazz music",
        "solar panels",
        "café culture in Wien",
        "chess openings",
        "rust programming",
        "the moon landing",
        "volcanoes",
        "origami",
        "coral reefs",
        "the French revolution",
        "machine learning",
        "vegan recipes",
        "marathon training",
        "house plants",
        "the printing press",
        "quantum computing",
        "street food in Bangkok",
        "birds of prey",
        "renewable energy",
        "ancient Egypt",
        "learning Spanish",
        "bike repair",
        "the Olympic games",
    ),
    titles=(
        "Team lunch",
        "Dentist",
        "Project review",
        "Birthday party",
        "Book club",
        "Yoga class",
        "Budget meeting",
        "Dinner with Anna",
        "Flight to Rome",
        "Piano lesson",
        "Weekly sync",
        "Parents evening",
        "Café avec Léa",
        "Job interview",
        "Movie night",
        "Code review",
    ),
    places=(
        "Room 4",
        "the office",
        "home",
        "the park",
        "Café Central",
        "Main Street",
        "the library",
        "Room 12",
    ),
    labels=(
        "Wake up",
        "Gym",
        "Meeting",
        "Take medicine",
        "Call mom",
        "Réveil",
        "Yoga",
        "School run",
        "Bus",
        "Laundry",
    ),
    chat=(
        ("Hello!", "Hello! How can I help you today?"),
        ("Hi there", "Hi! What can I do for you? Ask me anything."),
        ("Thanks!", "You're welcome! Let me know if you need anything else."),
        ("Thank you so much.", "Happy to help. Have a great day!"),
        (
            "Who are you?",
            "I am a small demo assistant trained for the Response Template Playground. "
            "I can chat a little and call the tools you give me.",
        ),
        ("Tell me a joke.", "Why did the parser cross the road? To reach the closing tag."),
        (
            "Tell me another joke.",
            "I told my computer a joke about JSON. It did not get the brackets, so it never closed.",
        ),
        ("What is 2 + 3?", "2 + 3 = 5."),
        ("What is 7 times 6?", "7 times 6 is 42. That is also the answer to everything, some say."),
        ("Say hello in French.", "Bonjour ! That is hello in French."),
        ("Say hello in Japanese.", "こんにちは！ That is hello in Japanese."),
        (
            "What is the capital of France?",
            "The capital of France is Paris. It is also its largest city.",
        ),
        (
            "What is the capital of Japan?",
            "The capital of Japan is 東京 (Tokyo). It is one of the largest cities in the world.",
        ),
        ("Good night.", "Good night, sleep well! Talk to you tomorrow."),
        (
            "How does a response template work?",
            "A response template lists the regions of a model's output and their "
            "delimiters. The parser reads the output and fills each field of the message.",
        ),
        (
            "What is a tool call?",
            "A tool call is a request from the model to run a function. It names the tool and "
            "gives its arguments as JSON.",
        ),
        ("Can you help me?", "Of course! Tell me what you need and I will do my best."),
        ("What is your favourite colour?", "I do not see colours, but I like the sound of blue."),
        ("Are you a robot?", "I am a very small language model. I live inside this playground."),
        (
            "Write a haiku about rain.",
            "Soft rain on the roof. The street shines under the lamps. The city sleeps on.",
        ),
        ("What day comes after Monday?", "Tuesday comes after Monday."),
        (
            "Do you like music?",
            "I like the idea of music! Jazz and old songs sound lovely in stories.",
        ),
        (
            "Explain JSON in one sentence.",
            "JSON is a text format for data, made of objects, lists, strings, numbers and booleans.",
        ),
        ("Bye!", "Goodbye! Come back any time."),
    ),
    invent_names=True,
)

EVALUATION_VALUES = ValuePool(
    cities=(
        "Nairobi",
        "Hanoi",
        "Porto",
        "Kyoto",
        "Göteborg",
        "Málaga",
        "Edinburgh",
        "Auckland",
        "Marseille",
        "Lyon",
        "Bergen",
        "Tallinn",
        "Vancouver",
        "Ottawa",
        "Osaka",
        "Sevilla",
        "Valparaíso",
        "Wrocław",
    ),
    topics=(
        "the history of chess",
        "wind turbines",
        "how glass is made",
        "deep sea fish",
        "the Silk Road",
        "baking bread at home",
        "mountain climbing",
        "the first computers",
    ),
    titles=(
        "Team dinner",
        "Doctor visit",
        "Sprint planning",
        "Coffee with Sam",
        "Guitar lesson",
        "Launch party",
    ),
    places=("Room 7", "the studio", "the station"),
    labels=("Run", "Pills", "Stand up", "Lunch"),
    chat=(
        ("Good morning!", ""),
        ("How are you today?", ""),
        ("What can you tell me about yourself?", ""),
        ("Tell me something funny.", ""),
        ("Say hello in Spanish.", ""),
        ("What is the capital of Italy?", ""),
    ),
    invent_names=False,
)

_SYLLABLES = (
    "ka",
    "lo",
    "ven",
    "dri",
    "mar",
    "tis",
    "bel",
    "or",
    "quin",
    "zu",
    "ra",
    "mi",
    "to",
    "sel",
    "dor",
    "an",
    "bri",
    "gal",
    "nu",
    "pes",
    "tor",
    "vi",
    "hel",
    "mon",
    "sa",
    "ber",
    "ga",
    "lin",
    "e",
    "ou",
    "ille",
    "ro",
    "ky",
    "na",
    "sk",
    "ba",
    "wen",
    "ch",
    "ste",
    "ux",
    "ja",
    "po",
    "ri",
    "deg",
    "ham",
    "os",
    "ü",
    "ñe",
)
_CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "snowy", "foggy", "stormy", "clear")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = dict(
    zip(_WEEKDAYS, ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"))
)
_UNIT_PAIRS = (
    ("km", "miles", 0.621371),
    ("miles", "km", 1.609344),
    ("kg", "pounds", 2.204623),
    ("pounds", "kg", 0.453592),
    ("celsius", "fahrenheit", None),
    ("liters", "gallons", 0.264172),
    ("meters", "feet", 3.28084),
    ("inches", "cm", 2.54),
    ("cups", "ml", 236.588),
    ("feet", "meters", 0.3048),
)


def _invented_name(rng: random.Random) -> str:
    """A made-up capitalised name ("Kalomar"), never one of the evaluation values."""
    while True:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
        if name not in EVALUATION_VALUES.cities:
            return name


def _city(rng: random.Random, values: ValuePool) -> str:
    # Made-up names can only be written by copying them from the question,
    # which teaches the model to copy any city, not to pick one it knows.
    if values.invent_names and rng.random() < 0.5:
        return _invented_name(rng)
    return rng.choice(values.cities)


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _join(parts: list[str]) -> str:
    return " ".join(part for part in parts if part)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass
class Request:
    """One thing the user asks a tool for.

    - `question`: how the user puts it;
    - `tool`: the TOOLS key;
    - `arguments`: the right arguments for that schema;
    - `goal`: a noun phrase for reasoning ("the weather in Paris");
    - `action`: a verb phrase for text before the call ("check the weather in Paris");
    - `notes`: reasoning sentences about the arguments (what is filled in, what is left out).
    """

    question: str
    tool: str
    arguments: dict
    goal: str
    action: str
    notes: list[str]


def _weather(rng: random.Random, values: ValuePool, tool: str) -> Request:
    city = _city(rng, values)
    has_unit = "unit" in TOOLS[tool]["function"]["parameters"]["properties"]
    days = rng.randint(2, 7) if rng.random() < 0.4 else None
    unit = rng.choice(["celsius", "fahrenheit"]) if rng.random() < 0.35 else None
    arguments: dict = {"city": city}
    notes = [f"The city is {city}."]
    if unit and has_unit:
        arguments["unit"] = unit
        notes.append(f"The user wants {unit}, and the tool has a unit parameter.")
    elif unit:
        notes.append(
            f"The user asks for {unit}, but this tool has no unit parameter, so I leave it out."
        )
    if days:
        arguments["days"] = days
        notes.append(f"The forecast should cover {days} days.")
    elif rng.random() < 0.5:
        notes.append("No number of days is given, so I only pass the city.")
    if days and unit:
        question = _pick(
            rng,
            "I need a {d}-day forecast for {c} in {u}.",
            "Weather in {c} for the next {d} days, in {u} please.",
        )
    elif days:
        question = _pick(
            rng,
            "Give me a {d}-day forecast for {c}.",
            "What will the weather be in {c} for the next {d} days?",
            "Will it rain in {c} in the next {d} days?",
        )
    elif unit:
        question = _pick(
            rng, "What's the temperature in {c} in {u}?", "Weather in {c}, in {u} please."
        )
    else:
        question = _pick(
            rng,
            "What's the weather in {c}?",
            "How is the weather in {c} today?",
            "Weather in {c}?",
            "Is it cold in {c} right now?",
            "Do I need an umbrella in {c}?",
            "What's the weather like in {c}?",
        )
    goal = f"the weather in {city}"
    return Request(
        question.format(c=city, d=days, u=unit), tool, arguments, goal, f"check {goal}", notes
    )


def _time(rng: random.Random, values: ValuePool, tool: str) -> Request:
    city = _city(rng, values)
    question = _pick(
        rng,
        "What time is it in {c}?",
        "Current time in {c}?",
        "Tell me the local time in {c}.",
        "Is it late in {c} now?",
    )
    goal = f"the local time in {city}"
    return Request(
        question.format(c=city),
        tool,
        {"city": city},
        goal,
        f"look up {goal}",
        [f"The city is {city}."],
    )


def _city_only(tool: str, city: str) -> Request:
    """A weather or time request that names a city and nothing else (one half of "in A and in B")."""
    goal = (
        f"the weather in {city}"
        if _SAME_NAME[tool] == "get_weather"
        else f"the local time in {city}"
    )
    verb = "check" if _SAME_NAME[tool] == "get_weather" else "look up"
    return Request(
        f"{goal}?", tool, {"city": city}, goal, f"{verb} {goal}", [f"The city is {city}."]
    )


def _convert(rng: random.Random, values: ValuePool, tool: str) -> Request:
    from_unit, to_unit, _ = rng.choice(_UNIT_PAIRS)
    value = rng.choice([rng.randint(1, 500), round(rng.uniform(0.5, 200), 1)])
    question = _pick(
        rng,
        "Convert {v} {f} to {t}.",
        "How many {t} is {v} {f}?",
        "{v} {f} in {t}?",
        "What is {v} {f} in {t}?",
    )
    arguments = {"value": value, "from_unit": from_unit, "to_unit": to_unit}
    notes = [f"The value is {value}, from {from_unit} to {to_unit}."]
    question = question.format(v=value, f=from_unit, t=to_unit)
    return Request(
        question,
        tool,
        arguments,
        f"{value} {from_unit} in {to_unit}",
        f"convert {value} {from_unit} to {to_unit}",
        notes,
    )


def _search(rng: random.Random, values: ValuePool, tool: str) -> Request:
    topic = rng.choice(values.topics)
    arguments: dict = {"query": topic}
    notes = [f"The query is {topic}."]
    style = rng.randrange(3)
    if style == 0:
        question = _pick(
            rng,
            "Search the web for {q}.",
            "Look up {q} online.",
            "Find articles about {q}.",
            "Can you search for {q}?",
        )
    else:
        arguments["max_results"] = rng.randint(1, 10)
        notes.append(f"The user wants {arguments['max_results']} results.")
        question = "Find {n} results about {q}."
        if style == 2:
            arguments["safe_search"] = rng.choice([True, False])
            notes.append("Safe search should be " + ("on." if arguments["safe_search"] else "off."))
            question = "Search {q}, top {n} results, safe search " + (
                "on." if arguments["safe_search"] else "off."
            )
    question = question.format(q=topic, n=arguments.get("max_results"))
    return Request(
        question, tool, arguments, f"results about {topic}", f"search the web for {topic}", notes
    )


def _event(rng: random.Random, values: ValuePool, tool: str) -> Request:
    title = rng.choice(values.titles)
    if values.invent_names and rng.random() < 0.4:
        title = rng.choice(("Call with {n}", "Lunch with {n}", "{n} review", "Visit {n}")).format(
            n=_invented_name(rng)
        )
    arguments: dict = {"title": title}
    notes = [f"The title is {title}."]
    details: dict = {}
    parts = []
    if rng.random() < 0.7:
        details["date"] = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        parts.append(f"on {details['date']}")
    if rng.random() < 0.6:
        details["time"] = f"{rng.randint(8, 20):02d}:{rng.choice([0, 15, 30, 45]):02d}"
        parts.append(f"at {details['time']}")
    if rng.random() < 0.4:
        details["location"] = rng.choice(values.places)
        parts.append(f"in {details['location']}")
    if details:
        arguments["details"] = details
        notes.append(
            "The "
            + _and(list(details))
            + (" go" if len(details) > 1 else " goes")
            + " into details, as an object."
        )
    notify = rng.choice([True, False]) if rng.random() < 0.4 else None
    if notify is not None:
        arguments["notify"] = notify
        parts.append("and notify me" if notify else "without a notification")
        notes.append(f"notify is {'true' if notify else 'false'}.")
    question = _pick(
        rng, 'Create an event "{t}"', 'Add "{t}" to my calendar', 'Put "{t}" in my calendar'
    )
    question = question.format(t=title) + (" " + " ".join(parts) if parts else "") + "."
    return Request(
        question,
        tool,
        arguments,
        f"a calendar event called {title}",
        f'create the event "{title}"',
        notes,
    )


def _alarm(rng: random.Random, values: ValuePool, tool: str) -> Request:
    hour, minute = rng.randint(5, 22), rng.choice([0, 15, 30, 45])
    clock = f"{hour:02d}:{minute:02d}"
    label = rng.choice(values.labels) if rng.random() < 0.4 else None
    if tool == "alarm":
        arguments: dict = {"hour": hour}
        notes = [f"The hour is {hour}" + (f" and the minutes are {minute}." if minute else ".")]
        if minute:
            arguments["minutes"] = minute
        if label:
            arguments["label"] = label
            notes.append(f"The label is {label}.")
        question = _pick(rng, "Set an alarm for {t}.", "Wake me up at {t}.", "Alarm at {t} please.")
        question = question.format(t=clock)
        if label:
            question = question[:-1] + f' and call it "{label}".'
        if rng.random() < 0.2:
            arguments["enabled"] = rng.choice([True, False])
            notes.append(
                "enabled is "
                + ("true." if arguments["enabled"] else "false: the user wants it off for now.")
            )
            question = question[:-1] + (
                ", and make sure it is on."
                if arguments["enabled"]
                else ", but leave it off for now."
            )
        return Request(
            question, tool, arguments, f"an alarm at {clock}", f"set an alarm for {clock}", notes
        )
    arguments = {"time": clock}
    notes = [f"The time is {clock}, written as HH:MM."]
    question = _pick(rng, "Set an alarm for {t}.", "Wake me up at {t}.").format(t=clock)
    if label:
        arguments["label"] = label
        notes.append(f"The label is {label}.")
        question = question[:-1] + f' called "{label}".'
    if rng.random() < 0.4:
        days = sorted(rng.sample(_WEEKDAYS, rng.randint(1, 3)), key=_WEEKDAYS.index)
        arguments["days"] = days
        notes.append("The days are " + _and(days) + ".")
        question = question[:-1] + " on " + _and([_DAY_NAMES[d] for d in days]) + "."
    if rng.random() < 0.25:
        options = {"snooze_minutes": rng.choice([5, 10, 15]), "vibrate": rng.choice([True, False])}
        arguments["options"] = options
        notes.append("Snooze and vibrate go into options.")
        question = (
            question[:-1]
            + f", snooze {options['snooze_minutes']} minutes, vibrate {'on' if options['vibrate'] else 'off'}."
        )
    return Request(
        question, tool, arguments, f"an alarm at {clock}", f"set an alarm for {clock}", notes
    )


_REQUESTS = {
    "weather": _weather,
    "weather_unit": _weather,
    "time": _time,
    "convert": _convert,
    "search": _search,
    "event": _event,
    "alarm": _alarm,
    "alarm_clock": _alarm,
}


def _result(rng: random.Random, request: Request) -> tuple[dict, str]:
    """A plausible tool result for `request` and the sentence that reports it."""
    arguments = request.arguments
    name = TOOLS[request.tool]["function"]["name"]
    if name == "get_weather":
        fahrenheit = arguments.get("unit") == "fahrenheit"
        symbol = "°F" if fahrenheit else "°C"
        high = rng.randint(40, 95) if fahrenheit else rng.randint(-5, 35)
        condition = rng.choice(_CONDITIONS)
        city = arguments["city"]
        if "days" in arguments:
            low = high - rng.randint(3, 12)
            result = {
                "city": city,
                "days": arguments["days"],
                "high": high,
                "low": low,
                "condition": condition,
            }
            return result, (
                f"The next {arguments['days']} days in {city} look mostly {condition}, "
                f"with highs of {high}{symbol} and lows of {low}{symbol}."
            )
        result = {"city": city, "temperature": high, "condition": condition}
        return result, f"It is {high}{symbol} and {condition} in {city} right now."
    if name == "get_time":
        clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
        return {"city": arguments["city"], "time": clock}, f"It is {clock} in {arguments['city']}."
    if name == "convert_units":
        factor = next(
            f
            for a, b, f in _UNIT_PAIRS
            if a == arguments["from_unit"] and b == arguments["to_unit"]
        )
        value = arguments["value"]
        converted = round(value * 9 / 5 + 32 if factor is None else value * factor, 2)
        return (
            {"result": converted, "unit": arguments["to_unit"]},
            f"{value} {arguments['from_unit']} is {converted} {arguments['to_unit']}.",
        )
    if name == "web_search":
        topic = arguments["query"]
        count = min(arguments.get("max_results", 3), 3)
        titles = [
            f"{topic[0].upper()}{topic[1:]}: {suffix}"
            for suffix in ("a short guide", "what to know", "ten facts")
        ][:count]
        return {
            "results": titles
        }, f'I found {count} results about {topic}. The first one is "{titles[0]}".'
    if name == "create_event":
        event_id = rng.randint(1, 999)
        when = arguments.get("details", {})
        at = " on " + when["date"] if "date" in when else ""
        return {
            "ok": True,
            "event_id": event_id,
        }, f'Your event "{arguments["title"]}" is in the calendar{at}.'
    clock = arguments.get("time") or f"{arguments['hour']:02d}:{arguments.get('minutes', 0):02d}"
    return {"ok": True, "alarm_id": rng.randint(1, 99)}, f"Done, your alarm is set for {clock}."


_CLOSINGS = (
    "Anything else?",
    "Let me know if you need more.",
    "Is there anything else I can do?",
    "Have a nice day!",
    "I hope that helps.",
    "",
)


def _tools_sentence(offered_names: list[str]) -> str:
    """The reasoning sentence that lists the offered tools, in the order the
    prompt gives them. Naming them before choosing teaches the model to look
    at what it was given, so that it calls a tool from the list or says that
    none fits. One fixed wording (and no draw from the random stream) keeps
    it easy to learn."""
    if not offered_names:
        return "No tools are offered."
    if len(offered_names) == 1:
        return f"The only offered tool is {offered_names[0]}."
    return f"The offered tools are {_and(offered_names)}."


def _reasoning_for_calls(
    rng: random.Random, requests: list[Request], offered_names: list[str]
) -> str:
    """2-5 sentences: what the user wants, the offered tools, which fits, the arguments, the plan."""
    names = [TOOLS[r.tool]["function"]["name"] for r in requests]
    listed = _tools_sentence(offered_names)
    if len(requests) == 1:
        request = requests[0]
        first = _pick(
            rng,
            f"The user wants {request.goal}.",
            f"The user is asking for {request.goal}.",
            f"This is a request for {request.goal}.",
        )
        tool = _pick(
            rng, f"{names[0]} can do this.", f"{names[0]} fits.", f"I should use {names[0]}."
        )
        notes = request.notes[: rng.randint(1, 2)]
        plan = _pick(rng, "One call is enough.", "I will call it once.", "")
        return _join(
            [first, listed, tool, *notes, plan]
            if len(notes) == 1
            else [first, listed, tool, *notes]
        )
    goals = _and([r.goal for r in requests])
    first = _pick(rng, f"The user wants {goals}.", f"The user is asking for {goals}.")
    tools = (
        f"I should call {names[0]} twice, once for each."
        if names[0] == names[1]
        else f"I need {names[0]} and {names[1]}."
    )
    plan = _pick(
        rng,
        "The two calls do not depend on each other, so I make both at once.",
        "I can make both calls at once.",
        "",
    )
    return _join([first, listed, tools, plan])


def _preamble(rng: random.Random, requests: list[Request]) -> str:
    """1-2 sentences before the calls, or "" about half the time."""
    if rng.random() < 0.5:
        return ""
    actions = _and([r.action for r in requests])
    first = _pick(
        rng,
        "Let me check that for you.",
        "Sure, one moment.",
        f"I will {actions}.",
        f"Sure! Let me {actions}.",
        "Good question, let me find out.",
    )
    second = _pick(
        rng,
        "This takes one tool call." if len(requests) == 1 else "This takes two tool calls.",
        "It should only take a moment.",
        "",
        "",
    )
    return _join([first, second])


def _call(request: Request) -> dict:
    return {
        "type": "function",
        "function": {
            "name": TOOLS[request.tool]["function"]["name"],
            "arguments": request.arguments,
        },
    }


def _offer(
    rng: random.Random, needed: list[str], count: int, forbidden: set[str] = frozenset()
) -> list[str]:
    """`count` tool keys (at least the `needed` ones), never two with one name, never a forbidden name."""
    names = {_SAME_NAME[key] for key in needed}
    offered = list(dict.fromkeys(needed))
    others = [
        key for key in TOOLS if _SAME_NAME[key] not in names and _SAME_NAME[key] not in forbidden
    ]
    rng.shuffle(others)
    for key in others:
        if len(offered) >= count:
            break
        if _SAME_NAME[key] not in {_SAME_NAME[k] for k in offered}:
            offered.append(key)
    rng.shuffle(offered)
    return offered


def _requests_for(rng: random.Random, values: ValuePool, kind: str, wanted: str) -> list[Request]:
    if kind != "parallel":
        return [_REQUESTS[wanted](rng, values, wanted)]
    name = _SAME_NAME[wanted]
    if name in ("get_weather", "get_time"):
        first, second = _city(rng, values), _city(rng, values)
        while second == first:
            second = _city(rng, values)
        return [_city_only(wanted, first), _city_only(wanted, second)]
    return [_REQUESTS[wanted](rng, values, wanted), _REQUESTS[wanted](rng, values, wanted)]


def _parallel_question(rng: random.Random, requests: list[Request]) -> str:
    a, b = requests
    if "city" in a.arguments and a.tool == b.tool:
        what = "the weather" if _SAME_NAME[a.tool] == "get_weather" else "the time"
        template = _pick(
            rng,
            "What's {w} in {a} and in {b}?",
            "Compare {w} in {a} and {b}.",
            "{W} in {a} and {b}, please.",
        )
        return template.format(
            w=what, W=what.capitalize(), a=a.arguments["city"], b=b.arguments["city"]
        )
    return (
        a.question
        + " "
        + _pick(rng, "Also: ", "And ", "Then: ")
        + b.question[0].lower()
        + b.question[1:]
    )


def sample(
    rng: random.Random,
    values: ValuePool = TRAINING_VALUES,
    *,
    kind: str | None = None,
    thinking: bool | None = None,
    tool_count: int | None = None,
) -> dict:
    """One conversation (see the module docstring for its keys); `kind`,
    `thinking` and `tool_count` are drawn when not given. `tool_count` is how
    many tools are offered (call kinds need at least 1)."""
    if thinking is None:
        thinking = rng.random() < 0.45
    if kind is None:
        kind = rng.choices(
            ["chat", "call", "parallel", "answer", "missing"], weights=[2.5, 4, 2, 3.5, 2.5]
        )[0]
    if tool_count is None:
        tool_count = (
            rng.choice([0, 1, 2, 3]) if kind in ("chat", "missing") else rng.choice([1, 2, 2, 3])
        )
    messages: list[dict] = []
    if rng.random() < 0.25:
        messages.append(
            {
                "role": "system",
                "content": _pick(
                    rng,
                    "You are a concise assistant.",
                    "Be helpful and brief.",
                    "You are a friendly assistant.",
                ),
            }
        )

    if kind in ("chat", "missing"):
        if kind == "missing":
            wanted = rng.choice(list(TOOLS))
            offered = _offer(rng, [], tool_count, forbidden={_SAME_NAME[wanted]})
            question = _REQUESTS[wanted](rng, values, wanted).question
        else:
            offered = _offer(rng, [], tool_count)
        tools = [TOOLS[key] for key in offered]
        abilities = list(
            dict.fromkeys(ABILITIES[TOOLS[key]["function"]["name"]] for key in offered)
        )
        if kind == "missing":
            need = ABILITIES[_SAME_NAME[wanted]]
            answer = _join(
                [
                    _pick(
                        rng,
                        f"Sorry, I cannot {need} with the tools I have here.",
                        f"I would need a tool to {need}, and I do not have one.",
                    ),
                    (
                        "I can " + _and(abilities) + " instead."
                        if abilities
                        else "No tools are available in this chat."
                    ),
                ]
            )
            reasoning = _join(
                [
                    f"The user wants me to {need}.",
                    _tools_sentence([TOOLS[key]["function"]["name"] for key in offered]),
                    "None of them can do that." if abilities else "",
                    "I should say so and mention what I can do."
                    if abilities
                    else "I should say so politely.",
                ]
            )
        elif abilities and rng.random() < 0.2:
            question = _pick(
                rng, "What can you do?", "Which tools do you have?", "How can you help me?"
            )
            answer = _join(
                [
                    "I can " + _and(abilities) + " with the tools in this chat.",
                    _pick(rng, "Just ask!", "What would you like to do?", ""),
                ]
            )
            reasoning = _join(
                [
                    "The user asks what I can do.",
                    "The offered tools tell me: " + _and(abilities) + ".",
                    "No tool call is needed to answer.",
                ]
            )
        else:
            question, answer = rng.choice(values.chat)
            reasoning = _join(
                [
                    _pick(rng, f'The user says: "{question}"', f'The message is "{question}"'),
                    _pick(
                        rng,
                        "This is small talk, so no tool is needed.",
                        "No tool is needed for this.",
                        "I can answer this directly without a tool.",
                    ),
                    _pick(
                        rng,
                        "I will answer briefly and kindly.",
                        "A short, friendly answer is best.",
                        "",
                    ),
                ]
            )
        turn: dict = {"role": "assistant", "content": answer}
        if thinking:
            turn["reasoning_content"] = reasoning
        messages += [{"role": "user", "content": question}, turn]
        return {"messages": messages, "tools": tools, "enable_thinking": thinking, "kind": kind}

    callable_keys = [
        key
        for key in TOOLS
        if kind != "parallel" or _SAME_NAME[key] not in ("create_event", "set_alarm")
    ]
    wanted = rng.choice(callable_keys)
    offered = _offer(rng, [wanted], max(tool_count, 1))
    tools = [TOOLS[key] for key in offered]
    parallel = kind == "parallel" or (
        kind == "answer"
        and rng.random() < 0.3
        and _SAME_NAME[wanted] in ("get_weather", "get_time")
    )
    requests = _requests_for(rng, values, "parallel" if parallel else "call", wanted)
    question = _parallel_question(rng, requests) if parallel else requests[0].question
    call_turn: dict = {"role": "assistant", "tool_calls": [_call(r) for r in requests]}
    preamble = _preamble(rng, requests)
    if preamble:
        call_turn["content"] = preamble
    if thinking:
        call_turn["reasoning_content"] = _reasoning_for_calls(
            rng, requests, [tool["function"]["name"] for tool in tools]
        )
    messages += [{"role": "user", "content": question}, call_turn]
    if kind != "answer":
        return {
            "messages": messages,
            "tools": tools,
            "enable_thinking": thinking,
            "kind": "parallel" if parallel else "call",
        }

    reports = []
    for request in requests:
        result, report = _result(rng, request)
        messages.append({"role": "tool", "content": json.dumps(result, ensure_ascii=False)})
        reports.append(report)
    answer_turn = {"role": "assistant", "content": _join([*reports, _pick(rng, *_CLOSINGS)])}
    if thinking:
        answer_turn["reasoning_content"] = _join(
            [
                _pick(
                    rng,
                    "The tool returned what I asked for.",
                    "The results are here.",
                    "The tool answered.",
                ),
                _pick(
                    rng,
                    f"It gives {_and([r.goal for r in requests])}.",
                    "I only need to report them clearly.",
                    "",
                ),
                _pick(
                    rng,
                    "I can answer now.",
                    "I will sum it up in a sentence or two.",
                    "Now I can reply.",
                ),
            ]
        )
    messages.append(answer_turn)
    return {"messages": messages, "tools": tools, "enable_thinking": thinking, "kind": "answer"}


def make_corpus(count: int, seed: int) -> list[dict]:
    """`count` seeded training conversations."""
    rng = random.Random(seed)
    return [sample(rng) for _ in range(count)]


EVALUATION_KINDS = (
    "call",
    "chat",
    "parallel",
    "answer",
    "call",
    "missing",
    "answer",
    "call",
    "parallel",
    "chat",
)


def evaluation_samples(count: int, seed: int) -> list[dict]:
    """`count` prompts drawn from EVALUATION_VALUES (values the training set
    never uses): two tools offered each, thinking on for every other prompt,
    kinds cycling through EVALUATION_KINDS."""
    rng = random.Random(seed)
    return [
        sample(
            rng,
            EVALUATION_VALUES,
            kind=EVALUATION_KINDS[i % len(EVALUATION_KINDS)],
            thinking=i % 2 == 1,
            tool_count=2,
        )
        for i in range(count)
    ]
