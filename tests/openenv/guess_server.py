"""A small OpenEnv environment served with openenv-core's own ``create_app``, for tests/openenv.test.ts.

Guess the number: ``reset(seed)`` draws a secret in [1, 100] with ``random.Random(seed)``; each step guesses it
(``{"guess": N}``) and is told "too low", "too high" or "correct". A right guess ends the episode with reward 1;
the tenth wrong one ends it with reward 0. Deterministic under a seed, multi-step, with state per session.

Usage: ``python guess_server.py [--port 0]``: prints ``listening on PORT`` once the server accepts connections.
"""

from __future__ import annotations

import argparse
import random
import socket
import sys
from typing import Any, Optional
from uuid import uuid4

import uvicorn
from pydantic import Field

from openenv.core.env_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 10


class GuessAction(Action):
    """Guess the secret number."""

    guess: int = Field(..., ge=1, le=100, description="Your guess, from 1 to 100.")


class GuessObservation(Observation):
    message: str = Field(..., description="What the game says.")
    guesses_left: int = Field(..., ge=0)


class GuessEnvironment(Environment[GuessAction, GuessObservation, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._secret: Optional[int] = None
        self._left = MAX_GUESSES

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> GuessObservation:
        self._secret = random.Random(seed).randint(1, 100)
        self._left = MAX_GUESSES
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(
            message=f"I am thinking of a number from 1 to 100. You have {MAX_GUESSES} guesses.",
            guesses_left=self._left,
            done=False,
            reward=0.0,
        )

    def step(self, action: GuessAction, timeout_s: Optional[float] = None, **kwargs: Any) -> GuessObservation:
        if self._secret is None:
            raise RuntimeError("step() before reset()")
        self._state.step_count += 1
        self._left -= 1
        if action.guess == self._secret:
            return GuessObservation(message=f"{action.guess} is correct!", guesses_left=self._left, done=True, reward=1.0)
        hint = "too low" if action.guess < self._secret else "too high"
        if self._left == 0:
            return GuessObservation(message=f"{action.guess} is {hint}. No guesses left: it was {self._secret}.", guesses_left=0, done=True, reward=0.0)
        return GuessObservation(message=f"{action.guess} is {hint}. {self._left} guesses left.", guesses_left=self._left, done=False, reward=0.0)

    @property
    def state(self) -> State:
        return self._state


app = create_app(GuessEnvironment, GuessAction, GuessObservation, env_name="guess", max_concurrent_envs=16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="websockets-sansio"))
    # The socket is listening before the line goes out, so the test may connect as soon as it reads it.
    sock.listen(128)
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
