"""Team: a leader agent whose tools delegate to member agents (Agno's ``Team``).

``team.py`` is the Team itself; ``delegates.py`` its delegate tools; ``blocks.py`` the text it
adds to prompts; ``options.py`` its modes.
"""

from __future__ import annotations

from .options import MODES, team_mode
from .team import Team

__all__ = ["MODES", "Team", "team_mode"]
