"""A small chat corpus for the retrieval tests: 40 turns over five weeks, with real embeddings."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, MemoryTier

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)  # the `clock` fixture's time (a Monday)

TURNS = [
    ("pets", "Caroline", "I adopted a golden retriever puppy named Rex last weekend."),
    ("pets", "Melanie", "Our cat Luna knocked a glass off the kitchen table again."),
    ("pets", "Caroline", "Rex chewed my new running shoes this morning."),
    ("pets", "Melanie", "We took Luna to the vet for her vaccinations."),
    ("pets", "Caroline", "The puppy training class starts on Saturday at the park."),
    ("travel", "Melanie", "We are planning a trip to Lisbon in June with the kids."),
    ("travel", "Caroline", "I booked a flight to Tokyo for the design conference."),
    ("travel", "Melanie", "The hotel in Lisbon has a balcony with a view of the river."),
    ("travel", "Caroline", "I once lost my passport at the airport in Madrid."),
    ("travel", "Melanie", "Hiking in the Alps was the best holiday we ever had."),
    ("work", "Caroline", "My manager approved the new project on renewable energy."),
    ("work", "Melanie", "I have a job interview at the city hospital next week."),
    ("work", "Caroline", "The quarterly report is due on Friday and I am behind."),
    ("work", "Melanie", "I started working night shifts as a nurse."),
    ("work", "Caroline", "Our team moved to a bigger office downtown."),
    ("food", "Melanie", "I baked a chocolate cake for my son's birthday party."),
    ("food", "Caroline", "I tried a vegan ramen place near the train station."),
    ("food", "Melanie", "My grandmother's lasagna recipe takes four hours to cook."),
    ("food", "Caroline", "I am learning to bake sourdough bread on weekends."),
    ("food", "Melanie", "We had sushi for dinner after the jazz concert."),
    ("family", "Melanie", "My daughter scored her first goal at the football match."),
    ("family", "Caroline", "My parents are visiting from Sweden this summer."),
    ("family", "Melanie", "My son is afraid of the dark and sleeps with a lamp on."),
    ("family", "Caroline", "My brother is getting married in September in Rome."),
    ("family", "Melanie", "We celebrated our tenth wedding anniversary at the beach."),
    ("hobby", "Caroline", "I joined a pottery class on Tuesday evenings."),
    ("hobby", "Melanie", "I painted a sunset over the lake for the living room."),
    ("hobby", "Caroline", "I am reading a novel about a lighthouse keeper."),
    ("hobby", "Melanie", "I go running along the river every morning before work."),
    ("hobby", "Caroline", "I play guitar in a small band with old friends."),
    ("health", "Caroline", "I went to an LGBTQ support group meeting and felt welcome."),
    ("health", "Melanie", "My back hurts after gardening all day on Sunday."),
    ("health", "Caroline", "I started therapy sessions to deal with stress at work."),
    ("health", "Melanie", "I signed up for a charity marathon in the autumn."),
    ("health", "Caroline", "Yoga before bed helps me sleep much better."),
    ("home", "Melanie", "The car broke down on the highway and we waited for a tow truck."),
    ("home", "Caroline", "I volunteer at the animal shelter on Sundays with the dogs."),
    ("home", "Melanie", "We bought an old house with a big garden and an apple tree."),
    ("home", "Caroline", "I want to become a counselor for transgender youth."),
    ("home", "Melanie", "The kids built a huge sandcastle at the beach."),
]

QUERIES = [
    "What is the name of Caroline's dog?",
    "Where is Melanie travelling in June?",
    "What did they eat last week?",
    "running by the river",
    "support group",
]

FILTERS = {
    "semantic tier": MemoryFilter(tiers={MemoryTier.SEMANTIC}),
    "importance >= 4": MemoryFilter(min_importance=4),
    "tags pets or food": MemoryFilter(tags_any=("pets", "food")),
    "session s1, Caroline": MemoryFilter(session_ids=("s1",), where={"speaker": "Caroline"}),
    "time window": MemoryFilter(since=T0 - timedelta(days=20), until=T0 - timedelta(days=5)),
}


def chat_items(vectors=None) -> list[MemoryItem]:
    """The 40 turns, one a day back from T0 (turn 39 is 1 day old), with varied fields."""
    items = []
    for i, (topic, speaker, text) in enumerate(TURNS):
        created = T0 - timedelta(days=len(TURNS) - i, hours=i % 5)
        items.append(
            MemoryItem(
                id=f"m{i:02d}",
                content=f"{speaker}: {text}",
                tier=MemoryTier.SEMANTIC if i % 3 == 0 else MemoryTier.EPISODIC,
                created_at=created,
                last_accessed=created + timedelta(hours=(i * 7) % 30),
                importance=i % 5 + 1,
                access_count=i % 4,
                tags=(topic,),
                session_id=f"s{i // 10 + 1}",
                metadata={"speaker": speaker},
                embedding=None if vectors is None else vectors[i],
            )
        )
    return items


@pytest.fixture(scope="session")
def chat_corpus(embedder) -> list[MemoryItem]:
    """The chat turns with their all-MiniLM-L6-v2 embeddings (encoded once per session)."""
    return chat_items(embedder.encode([f"{speaker}: {text}" for _, speaker, text in TURNS]))


class FixedRetriever:
    """A stub first stage: the same scored items for every query, filter first; records the depth asked."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores, self.items, self.depths = scores, {}, []

    def index(self, items):
        self.items.update({item.id: item for item in items})

    def search(self, query, k, filter=None):
        self.depths.append(k)
        hits = [Hit(self.items[i], s) for i, s in self.scores.items() if i in self.items]
        hits = [hit for hit in hits if filter is None or filter.matches(hit.item)]
        return sorted(hits, key=lambda hit: -hit.score)[:k]
