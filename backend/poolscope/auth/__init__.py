"""Users, sessions, CSRF and rate limits: `Depends(require_role("operator"))` guards a route."""

from poolscope.auth.deps import require_role
from poolscope.auth.service import AuthService, User

__all__ = ["AuthService", "User", "require_role"]
