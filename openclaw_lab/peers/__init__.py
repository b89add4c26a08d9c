"""Other memory systems behind one small protocol, scored on the same replay as ours.

A ``MemorySystem`` receives a user's turns session by session, in dataset time, and answers a
query with ranked memories that map back to the turns they came from. Adapters wrap external
libraries (mem0, MemPalace), each an optional extra imported only when used.
"""

from openclaw_lab.peers.protocol import MemorySystem, Observation, Recalled, check_installed, require

__all__ = ["MemorySystem", "Observation", "Recalled", "check_installed", "require"]
