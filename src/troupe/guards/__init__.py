"""What keeps a turn on track: transfer repair, limits, repeat detection.

:mod:`troupe.tree` attaches one :class:`~troupe.guards.turn.Guards` to every
tree it builds; the runtime's plugins (:mod:`troupe.runtime.plugins`) run its
callbacks on every door. The repairs of malformed replies and the record of a
turn's calls live here too, so the tree can build them without the runtime.
"""
