"""Word pools and sentence templates for the synthetic generator (data only; no logic).

Fact kinds are keyed by a person ("my sister Ana") or by the user ("I"); each has several phrasings for
the statement, the update and the question, so that a question rarely repeats its evidence verbatim.
Distractors reuse the same names, cities, jobs and hobbies in sentences that state no fact.
"""

from __future__ import annotations

from typing import NamedTuple


class FactKind(NamedTuple):
    """One kind of fact: its values, whether it is a dated event or can change, and its phrasings."""

    pool: list[str]
    event: bool  # a dated event: asked about with a "when" question
    mutable: bool  # can be updated later ("Ana moved to Lyon")
    statements: list[str]
    updates: list[str]
    questions: list[str]
    questions_now: list[str]  # asked when the fact was updated
    questions_when: list[str]  # asked about an event's date
    retractions: list[str] = []  # the fact stops being true ("Ana sold the car and has no car any more")
    retracted: str = ""  # the answer once retracted: words every retraction of this kind contains

FIRST_NAMES = """Ana Tomas Lena Rui Marta Jonas Ines Karim Sofia Mateo Yara Oskar Lucia Idris Nora Felix Amara Hugo
Elif Pavel Zoe Rafael Mina Emil Clara Tariq Ida Bruno Leila Anton Maya Diego Freya Samir Alma Viktor Noa Luca Rosa
Kenji Ayla Milan Iris Omar Greta Tobias Selin Marco Hana Niko Eva Sami Lotte Aziz Carmen Jan Talia Arjun Olga Theo
Priya Ilya Beatriz Finn Nadia Goran Elena Kai Miriam Lars Chiara Farid Vera Jakub Esme Ravi Dana Stefan Aiko Pablo
Linnea Yusuf Petra Adrian Leona Mateus Signe Dario Halima Oren Agnes Rohan Tessa Bilal Joana Emre Nell Ciro Ingrid
Malik Rhea Sven Daria Ezra Paula Kofi Liv Matteo Anya Bram Celia Duc Wanda Levi Irene Sanjay Mila""".split()

LAST_NAMES = """Silva Novak Berg Costa Weber Haddad Moreau Rossi Kowalski Tanaka Okafor Larsen Duarte Horvat
Jensen Ferreira Nakamura Petrov Lindqvist Mendes Schulz Kaya Ivanova Romano Dubois Varga Sato Nilsson Ortega
Bianchi Keller Sousa Yilmaz Fischer Marin Holm Castro Lehmann Popescu Rinaldi Aydin Moretti Svensson Lopes
Kovac Richter Alves Bauer Nowak Ward""".split()

RELATIONS = """sister brother cousin aunt uncle friend neighbour colleague boss roommate niece nephew grandmother
grandfather classmate teammate mentor flatmate godmother stepbrother""".split()

CITIES = """Porto Lyon Krakow Valencia Ghent Bologna Tallinn Leeds Bergen Graz Seville Utrecht Bilbao Gdansk Turin
Nantes Aarhus Zagreb Brno Malaga Dresden Cork Lille Genoa Riga Vilnius Basel Bordeaux Split Lisbon Oslo Vienna
Prague Munich Dublin Naples Helsinki Athens Madrid Milan Toronto Montreal Denver Austin Portland Seattle Boston
Chicago Osaka Kyoto Seoul Busan Taipei Hanoi Manila Lagos Nairobi Accra Cairo Tunis Lima Quito Bogota Santiago
Mendoza Curitiba Recife Auckland Perth Hobart Adelaide Brisbane Vancouver Calgary Halifax Reykjavik Tromso
Cusco""".split()

JOBS = """nurse architect carpenter pharmacist librarian electrician dentist translator plumber veterinarian
accountant journalist pilot chef firefighter geologist baker surveyor paramedic teacher lawyer florist
photographer mechanic optician economist welder midwife barista tailor physiotherapist locksmith sommelier
cartographer zookeeper beekeeper radiologist archivist glassblower stonemason notary actuary""".split()

HOBBIES = """the cello|pottery|rock climbing|Japanese|salsa dancing|chess|watercolour painting|the violin|
woodworking|scuba diving|Portuguese|fencing|the saxophone|calligraphy|kayaking|archery|the ukulele|knitting|
bouldering|sourdough baking|tango|Mandarin|the harp|figure skating|sailing|jiu-jitsu|the accordion|bookbinding|
birdwatching|the drums|origami|Swahili|stand-up comedy|glass painting|the banjo|beekeeping|fly fishing|yoga|
the flute|Korean|taxidermy|screen printing|the bagpipes|trail running|embroidery""".replace("\n", "").split("|")

PETS = """beagle|tabby cat|parrot|golden retriever|rabbit|tortoise|corgi|hamster|Siamese cat|border collie|
ferret|dachshund|cockatiel|husky|guinea pig|Maine Coon|poodle|gecko|chinchilla|greyhound|axolotl|pug|
bearded dragon|whippet|canary""".replace("\n", "").split("|")

CARS = """Volvo estate|red Fiat 500|Toyota Prius|old Land Rover|Tesla Model 3|Skoda Octavia|Mini Cooper|
Honda Civic|Renault Clio|Subaru Outback|VW camper van|Mazda MX-5|Peugeot 208|Kia Niro|Nissan Leaf|
Ford Transit|Dacia Duster|Citroen C3|Hyundai Ioniq|BMW i3""".replace("\n", "").split("|")

FOODS = """ramen|paella|shakshuka|mushroom risotto|pho|lasagne|falafel|moussaka|pierogi|green curry|tacos al pastor|
gnocchi|bibimbap|goulash|ceviche|pad thai|tagine|dumplings|bouillabaisse|jollof rice|pastel de nata|borscht|
katsu curry|arepas|laksa|fish and chips|tiramisu|baklava|biryani|okonomiyaki""".replace("\n", "").split("|")

ALLERGENS = """peanuts|shellfish|cat hair|pollen|penicillin|sesame|kiwi|latex|bee stings|gluten|strawberries|
walnuts|dust mites|soy|mustard|celery|horses|mango|eggs|lupin""".replace("\n", "").split("|")

# {who}: "my sister Ana"; {Who}: the same capitalised; {name}: "Ana"; {value}: the fact's value;
# {a_value}: the value with its article ("an architect").
PERSON_KINDS: dict[str, FactKind] = {
    "city": FactKind(
        CITIES, False, True,
        ["{Who} lives in {value}.", "{Who} has been living in {value} for a while now.",
         "Did I tell you that {who} is based in {value}?", "{Who} rents a small flat in {value}."],
        ["{name} moved to {value} last week.", "Big news: {who} relocated to {value}.",
         "{name} packed everything up and lives in {value} now.", "{Who} has just settled in {value}."],
        ["Where does {who} live?", "Which city is {who} based in?", "In what city does {who} have a flat?"],
        ["Where does {who} live now?", "Which city is {who} in these days?", "Where is {who} based at the moment?"],
        [],
        ["{name} gave up the flat in {value} and has no fixed home any more.",
         "{Who} left {value} to travel and has no fixed home any more."],
        "no fixed home any more",
    ),
    "job": FactKind(
        JOBS, False, True,
        ["{Who} works as {a_value}.", "{Who} earns a living as {a_value}.", "{Who} has a job as {a_value}."],
        ["{name} quit and started a new job as {a_value}.", "{Who} switched careers and is {a_value} now.",
         "{Who} got hired as {a_value} last month."],
        ["What does {who} do for work?", "What is the job of {who}?", "What is {who}'s profession?"],
        ["What is the current job of {who}?", "What does {who} do for a living these days?"],
        [],
        ["{name} quit working as {a_value} and has no job any more.",
         "{Who} was let go as {a_value} and has no job any more."],
        "no job any more",
    ),
    "car": FactKind(
        CARS, False, True,
        ["{Who} drives {a_value}.", "{Who} gets around in {a_value}.", "{Who} owns {a_value}."],
        ["{name} sold the old car and bought {a_value}.", "{Who} traded in the car for {a_value}.",
         "{Who} finally replaced the old car with {a_value}."],
        ["What car does {who} drive?", "What kind of car does {who} own?"],
        ["What car does {who} drive now?", "Which car does {who} have at the moment?"],
        [],
        ["{name} sold the {value} and has no car any more.", "{Who} got rid of the {value} and has no car any more."],
        "no car any more",
    ),
    "food": FactKind(
        FOODS, False, True,
        ["The favourite dish of {who} is {value}.", "{Who} could eat {value} every single day.",
         "{Who} always orders {value} when we eat out."],
        ["{name} says {value} is the new favourite dish.",
         "{Who} has gone off the old favourite and loves {value} now.",
         "These days {who} is obsessed with {value}."],
        ["What is the favourite dish of {who}?", "What food does {who} like best?"],
        ["What is the favourite dish of {who} now?", "Which food does {who} love most these days?"],
        [],
    ),
    "allergy": FactKind(
        ALLERGENS, False, False,
        ["{Who} is allergic to {value}.", "{Who} has a bad allergy to {value}.",
         "We learned that {who} reacts badly to {value}."],
        [],
        ["What is {who} allergic to?", "Which allergy does {who} have?"],
        [],
        [],
    ),
    "pet": FactKind(
        PETS, True, False,
        ["{Who} adopted {a_value} today.", "{Who} brought home {a_value} from the shelter this morning."],
        [],
        ["What pet did {who} adopt?", "What kind of animal did {who} bring home?"],
        [],
        ["When did {who} adopt the {value}?", "On what day did {who} bring home the {value}?"],
    ),
    "hobby": FactKind(
        HOBBIES, True, False,
        ["{Who} started learning {value} today.", "{Who} had a first lesson in {value} this afternoon.",
         "{Who} signed up for {value} classes today."],
        [],
        ["What did {who} start learning?", "Which lessons did {who} sign up for?"],
        [],
        ["When did {who} start learning {value}?", "On what date did {who} take up {value}?"],
    ),
    "trip": FactKind(
        CITIES, True, False,
        ["{Who} flew to {value} for a holiday today.", "{Who} left on a trip to {value} this morning."],
        [],
        ["Where did {who} go on holiday?", "Which city did {who} travel to?"],
        [],
        ["When did {who} travel to {value}?", "On what day did {who} leave for {value}?"],
    ),
}

# The user's own facts: one of each kind per conversation at most.
SELF_KINDS: dict[str, FactKind] = {
    "city": FactKind(
        CITIES, False, True,
        ["I live in {value}.", "I've been renting a flat in {value} for two years.", "Home for me is {value}."],
        ["I finally moved to {value}!", "We relocated, I live in {value} now."],
        ["Where do I live?", "Which city is my home?"],
        ["Where do I live now?", "Which city did I move to?"],
        [],
        ["I gave up my flat in {value}, I have no fixed home any more."],
        "no fixed home any more",
    ),
    "job": FactKind(
        JOBS, False, True,
        ["I work as {a_value}.", "I've been {a_value} since college."],
        ["I changed jobs, I'm {a_value} now.", "New chapter: I started working as {a_value}."],
        ["What do I do for work?", "What is my job?"],
        ["What is my current job?", "What do I do for a living now?"],
        [],
        ["I quit working as {a_value}, I have no job any more."],
        "no job any more",
    ),
    "hobby": FactKind(
        HOBBIES, True, False,
        ["I started learning {value} today.", "Today was my first lesson in {value}."],
        [],
        ["What did I start learning?", "Which new skill did I take up?"],
        [],
        ["When did I start learning {value}?", "On what date did I take up {value}?"],
    ),
    "pet": FactKind(
        PETS, True, False,
        ["We adopted {a_value} today.", "I brought home {a_value} from the shelter today."],
        [],
        ["What pet did I adopt?", "What animal did I bring home from the shelter?"],
        [],
        ["When did I adopt the {value}?", "On what day did I bring home the {value}?"],
    ),
}

# Plans for a date ahead of the statement ({date}: "12 June 2023"); they expire when the date passes.
PLANS = [
    "{Who} is flying to {value} on {date}.",
    "{Who} booked a table at a restaurant in {value} for {date}.",
    "{Who} has a job interview in {value} on {date}.",
    "{Who} is meeting an old friend in {value} on {date}.",
]

# Distractor chatter: the same vocabulary, no fact stated. Slots: {name} {rel} {city} {city2} {job}
# {hobby} {pet} {car} {food}; {a_job} is the word with its article, {A_job} capitalised.
DISTRACTORS = [
    "I watched a documentary about {city} last night.",
    "{name} sent me a funny video this morning.",
    "Do you know any good podcasts about {hobby}?",
    "The weather in {city} looks awful this week.",
    "I had {food} for lunch, it was just okay.",
    "Someone at the gym said they want to become {a_job}.",
    "I saw {a_car} parked outside, it looked brand new.",
    "Would you rather spend a weekend in {city} or {city2}?",
    "I keep thinking I should try {hobby} one day.",
    "Remind me to call {name} about the weekend.",
    "How long is the flight from {city} to {city2}?",
    "The {pet} next door was noisy all night.",
    "What should I cook tonight? Maybe {food}.",
    "I read that every {job} in town is overworked.",
    "{name} recommended a novel set in {city}.",
    "My {rel} and I argued about football again.",
    "Is {a_car} expensive to insure?",
    "There's a {hobby} festival in {city} next month.",
    "I bumped into {name} at the supermarket.",
    "I can't decide what to get my {rel} for their birthday.",
    "Do you think {a_pet} is a good pet for a small flat?",
    "The new {food} place downtown was too crowded.",
    "I'm so tired today, I barely slept.",
    "Can you help me plan my week?",
    "What's a good way to stay focused while working from home?",
    "{name} asked whether I'd like to visit {city} together.",
    "{A_job} on the radio talked about burnout.",
    "I need a break from my phone.",
    "Have you ever heard of {hobby} for beginners?",
    "I'm trying to drink more water this month.",
]

# Confusers: a known person's name next to the value of one of their facts, stating nothing new.
# Slots: {name} {value}.
CONFUSERS = [
    "{name} and I chatted about {value} over coffee.",
    "Do you think {name} would enjoy a podcast about {value}?",
    "I was telling a friend about {name} and {value} yesterday.",
    "Note to self: ask {name} something that isn't about {value} for once.",
    "Funny, a stranger on the bus mentioned {value} and I thought of {name}.",
]

ASSISTANT_OPENERS = [
    "That sounds lovely.", "Oh, interesting!", "I see.", "Thanks for telling me.", "Good to know.",
    "That's a lot to take in.", "Nice!", "Ha, I can imagine.", "Got it.", "That's great to hear.",
    "Hmm, good question.", "I understand.", "Wow.", "Fair enough.", "That makes sense.",
]
ASSISTANT_FOLLOWUPS = [
    "How are you feeling about it?", "Tell me more whenever you like.", "What happens next?",
    "Do you want some suggestions?", "I'm happy to help you plan.", "Let me know how it goes.",
    "Is there anything I can do?", "Would you like me to remember that?", "What do you think about it?",
    "That could be a fun weekend project.", "Take it one step at a time.", "It might be worth a try.",
    "I'd love to hear an update later.", "Maybe write it down so you don't forget.", "Sounds like a busy week.",
]
