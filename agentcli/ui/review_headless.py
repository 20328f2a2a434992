"""`agentcli review [TARGET]`: /review headless, for CI. The output formats are -p's; json and stream-json's result
carries a ``findings`` array, and ``--fail-on SEVERITY`` exits 1 when a verified finding that severe or worse stands."""

from __future__ import annotations

import asyncio

from ..core.door import LLMError, Review, ReviewTargetError, SessionSurface
from ..signals import exit_signals
from .headless import Answer, HeadlessOutput, cancel_landed, exit_status, report, stopped
from .prompt_mark import Mark


async def run_review(session: SessionSurface, target: str, output: HeadlessOutput, fail_on: str | None) -> int:
    """Review ``target`` to the end and print the outcome in the chosen format. Returns the exit code."""
    await session.wait_servers()
    output.attach(session)
    if output.reader_gone:
        await session.aclose()
        return output.gone_status
    output.run = asyncio.current_task()
    mark = Mark.of(session)
    ended_by: list[int] = []

    def on_signal(signum: int) -> None:
        ended_by.append(signum)
        if output.run is not None:
            output.run.cancel()

    review: Review | None = None
    with exit_signals(on_signal):
        try:
            review = await session.review(target)
            result = Answer(review.summary(), "done")
        except ReviewTargetError as exc:
            result = Answer(str(exc), "refused", str(exc))
        except LLMError as exc:
            result = Answer(str(exc), "error", str(exc))
        except asyncio.CancelledError:
            result = stopped(output, "", ended_by)
        finally:
            output.run = None
            if output.reader_gone or output.over_budget:
                await cancel_landed()
            await session.aclose()
    found = review.to_dict() if review is not None else {}
    report(output, session, mark, result, {"findings": found.pop("findings", []), "review": found})
    code = exit_status(output, result, ended_by, session)
    if code == 0 and fail_on and review is not None and review.failed:  # fail closed: nobody looked for them
        failed = f"{len(review.failed)} reviewer{'' if len(review.failed) == 1 else 's'}"
        output.write(
            output.err,
            f"agentcli: {failed} failed, so the review cannot show that no finding at or above "
            f"--fail-on {fail_on} stands.\n",
        )
        return 1
    standing = review.standing(fail_on) if review is not None and fail_on else []
    if code == 0 and standing:
        output.write(
            output.err,
            f"agentcli: {len(standing)} verified finding{'s' if len(standing) != 1 else ''} "
            f"at or above --fail-on {fail_on}.\n",
        )
        return 1
    return code
