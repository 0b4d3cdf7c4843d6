"""AgentRunner: the local loop (CLI, tests, benchmarks) over AgentTurn until the run ends."""

from __future__ import annotations

import uuid

from wp_agent.agent.approval_protocol import ApprovalRefusedError
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.outcome import awaiting_approval_output
from wp_agent.agent.ports import AgentDeps, ApprovalDecision, Approvals
from wp_agent.agent.session_state import SessionState
from wp_agent.agent.turn import AgentTurn
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import AgentInput, AgentOutput
from wp_agent.models.target import UpdateAllowance
from wp_agent.models.workflow import Route


class AgentRunner:
    def __init__(self, deps: AgentDeps, approvals: Approvals) -> None:
        self._deps = deps
        self._approvals = approvals
        self._turn = AgentTurn(deps)
        self.last_state: SessionState | None = None

    def run(
        self,
        agent_input: AgentInput,
        *,
        user_id: str = "local-user",
        target_id: str = "local",
        session_id: str | None = None,
        site_url: str | None = None,
        network_admin: bool = True,
        update_allowance: UpdateAllowance | None = None,
    ) -> AgentOutput:
        """Run to the end; locally the operator is the site's administrator (network commands allowed
        unless the input scopes the run to one site), with the updates its owner allows in advance."""
        state = new_session(
            agent_input,
            session_id=session_id or f"ses_{uuid.uuid4().hex[:20]}",
            user_id=user_id,
            target_id=target_id,
            site_url=site_url,
            network_admin=network_admin,
            update_allowance=update_allowance,
        )
        return self.resume(state)

    def decide(self, state: SessionState, decision: ApprovalDecision) -> None:
        """The requester's decision on the held run. Refused (the approval expired while it waited, or
        the run ended): nothing held runs, and the run ends as an expired approval does."""
        try:
            self._turn.decide(state, decision)
        except ApprovalRefusedError:
            self._turn.expire_approval(state)

    def resume(self, state: SessionState) -> AgentOutput:
        """Run an existing session on to its end (e.g. a held run once its approval is decided)."""
        self.last_state = state
        max_iterations = state.input.max_iterations or self._deps.settings.agent_max_iterations
        # Each pass either calls the model (bounded by max_iterations) or ends; the cap is a backstop.
        for _ in range(2 * max_iterations + 4):
            result = self._turn.advance(state)
            if result is Route.CONTINUE:
                continue
            if result is Route.AWAITING_APPROVAL and state.pending_approval is not None:
                decision = self._approvals.decide(state.pending_approval, state)
                if decision is None:
                    return awaiting_approval_output(state, simulated=self._deps.wp_cli.simulated)
                self.decide(state, decision)
                continue
            if state.result is not None:
                return state.result
        raise WpAgentError(AgentErrorCode.MAX_ITERATIONS_EXCEEDED, details={"reason": "runner_backstop"})
