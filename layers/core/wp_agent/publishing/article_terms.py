"""The article's categories and tags on the site, safe against other publishes running at the same time.

Two publishes with the same new tag both see it missing and both create it. WordPress usually refuses
the second (`term_exists`) or, finding the other's row right after inserting its own, hands back the
older term; that answer is used, and a term someone else made is never this call's to remove. But when
the older term's rows are not yet all written as the newer one checks, both stay: so a call that created
a term reads the taxonomy once more after setting it, and where an older term alike now exists, moves its
post to that one and removes its own copy if no other post uses it — every caller settles on the oldest.
After the terms are set they are read back from the post, and set once more should one have vanished
meanwhile (another call's clean-up), so a publish that reports success has every term it was asked for.
A clean-up removes a term only if this call created it and no other post uses it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

from wp_agent.publishing import commands
from wp_agent.publishing.outcome import CleanupOutcome, PublishErrorCode, Resource
from wp_agent.publishing.steps import PublishRun, StepError, StepRunner, ids_of, porcelain_id
from wp_agent.publishing.terms import SiteTerm, Taxonomy, WantedTerm, find_term, parse_term_list

logger = logging.getLogger(__name__)

_NOUN_JA = {"category": "カテゴリ", "post_tag": "タグ"}
# Set, read back, look again: a term that vanished is found or made anew, a copy gives way to an older
# one alike; each round is one more chance for the calls running at the same time to settle.
_SETTLING_ROUNDS = 3


class ArticleTerms:
    def __init__(self, steps: StepRunner) -> None:
        self._steps = steps

    def read_existing(
        self, run: PublishRun, wanted: Sequence[WantedTerm]
    ) -> dict[WantedTerm, SiteTerm | None]:
        """The site's terms before anything is created (kept in `run.terms_before`), per wanted term."""
        for taxonomy in _taxonomies(wanted):
            run.terms_before[taxonomy] = self._list(run, taxonomy, "既存のカテゴリ・タグの確認")
        return {term: find_term(term, run.terms_before[term.taxonomy]) for term in wanted}

    def set_on(
        self,
        run: PublishRun,
        post_id: int,
        wanted: Sequence[WantedTerm],
        known: dict[WantedTerm, SiteTerm | None],
    ) -> None:
        """Create the missing terms, set exactly the wanted ones on the post, read them back, and settle
        on the oldest of alike terms where this call created one (module docstring)."""
        if not wanted:
            return
        term_ids = self._ids(run, wanted, known)
        replaced: list[Resource] = []
        for _ in range(_SETTLING_ROUNDS):
            self._set(run, post_id, wanted, term_ids)
            missing = self._missing_on(run, post_id, term_ids)
            unsettled = [term for term in wanted if term in missing or self._created(run, term, term_ids)]
            if not unsettled:
                break
            # A term vanished (another call removed it) or this call made one another call may have made
            # too: which term is it now?
            listed = {
                taxonomy: self._list(run, taxonomy, "カテゴリ・タグの再確認")
                for taxonomy in _taxonomies(unsettled)
            }
            fresh = self._ids(run, unsettled, {t: find_term(t, listed[t.taxonomy]) for t in unsettled})
            moved = {term: term_id for term, term_id in fresh.items() if term_id != term_ids[term]}
            if not missing and not moved:
                break
            # This call's own copy, still on the site, gives way to the older one alike (WordPress may
            # already have set that one instead: `post term set` finds a term by its slug, oldest first).
            still_listed = {(t, site.term_id) for t, terms in listed.items() for site in terms}
            replaced += [
                own
                for term in moved
                if (own := self._created(run, term, term_ids)) and (own.kind, own.object_id) in still_listed
            ]
            term_ids.update(moved)
        else:
            names = "、".join(f"{_NOUN_JA[term.taxonomy]}「{term.label}」" for term in missing or moved)
            raise StepError(PublishErrorCode.PUBLISH_FAILED, f"{names}を投稿に設定できませんでした")
        for duplicate in replaced:
            self._remove_duplicate(run, duplicate)

    def remove_created(
        self, run: PublishRun, resource: Resource, ignoring: Collection[int]
    ) -> CleanupOutcome:
        """Delete a term this call created, unless a post (apart from `ignoring`) uses it now."""
        users = self.users(run, resource, ignoring=ignoring)
        if users is None:
            return "remaining"
        if users:
            return "kept"
        argv = commands.term_delete_argv(resource.kind, resource.object_id)
        deleted = self._steps.delete_created(
            run, resource, argv, f"Deleted {resource.kind} {resource.object_id}."
        )
        return "removed" if deleted else "remaining"

    def users(self, run: PublishRun, resource: Resource, ignoring: Collection[int]) -> list[int] | None:
        """The posts (any type, any status but trash) that use the term, apart from `ignoring`; None
        when that could not be read."""
        if resource.kind not in ("category", "post_tag"):
            raise ValueError(f"not a term: {resource.kind}")
        argv = commands.term_users_argv(resource.kind, resource.object_id)
        try:
            stdout = self._steps.run(run, argv, "カテゴリ・タグの使用状況の確認").stdout
        except StepError:
            return None
        return [post_id for post_id in ids_of(stdout) if post_id not in ignoring]

    # -- steps ------------------------------------------------------------------------------------

    def _ids(
        self, run: PublishRun, wanted: Sequence[WantedTerm], known: dict[WantedTerm, SiteTerm | None]
    ) -> dict[WantedTerm, int]:
        ids: dict[WantedTerm, int] = {}
        for term in wanted:
            found = known.get(term)
            ids[term] = found.term_id if found is not None else self._create(run, term)
        return ids

    def _set(
        self, run: PublishRun, post_id: int, wanted: Sequence[WantedTerm], ids: dict[WantedTerm, int]
    ) -> None:
        for taxonomy in _taxonomies(wanted):
            chosen = list(dict.fromkeys(str(ids[term]) for term in wanted if term.taxonomy == taxonomy))
            self._steps.run(
                run,
                commands.post_term_set_argv(post_id, taxonomy, chosen),
                "カテゴリの設定" if taxonomy == "category" else "タグの設定",
            )

    def _created(self, run: PublishRun, term: WantedTerm, ids: dict[WantedTerm, int]) -> Resource | None:
        """This call's record of the term it set for `term`, when this call created that term."""
        return next((r for r in run.created if (r.kind, r.object_id) == (term.taxonomy, ids[term])), None)

    def _remove_duplicate(self, run: PublishRun, duplicate: Resource) -> None:
        """The post moved to an older term alike; this call's own copy goes, unless someone uses it now."""
        outcome = self.remove_created(run, duplicate, ignoring=())
        if outcome == "removed":
            run.created.remove(duplicate)
        else:
            logger.warning(
                "duplicate term left on the site",
                extra={
                    "session_id": run.session_id,
                    "term": f"{duplicate.kind}:{duplicate.object_id}",
                    "outcome": outcome,
                },
            )

    def _missing_on(self, run: PublishRun, post_id: int, ids: dict[WantedTerm, int]) -> list[WantedTerm]:
        argv = commands.post_terms_argv(post_id, _taxonomies(ids))
        present = set(ids_of(self._steps.run(run, argv, "設定したカテゴリ・タグの確認").stdout))
        return [term for term, term_id in ids.items() if term_id not in present]

    def _create(self, run: PublishRun, term: WantedTerm) -> int:
        purpose = f"{_NOUN_JA[term.taxonomy]}「{term.label}」の作成"
        try:
            result = self._steps.run(run, commands.term_create_argv(term), purpose)
        except StepError as failure:
            if failure.answered:
                # WordPress refused it, so nothing was created: most often because another call made the
                # same term a moment ago. That term is used (it is not ours to remove).
                existing = find_term(term, self._list(run, term.taxonomy, "作成済みのカテゴリ・タグの確認"))
                if existing is not None:
                    return existing.term_id
            else:
                self._find_new(run, term)
            raise
        term_id = porcelain_id(result.stdout)
        if term_id is None:
            self._find_new(run, term)
            raise StepError(PublishErrorCode.PUBLISH_FAILED, f"{purpose}の結果（ID）を読み取れませんでした")
        run.created.append(Resource(term.taxonomy, term_id, term.label))
        return term_id

    def _find_new(self, run: PublishRun, term: WantedTerm) -> None:
        """After a create whose outcome is unknown: a matching term that is new since the start may be ours
        (the clean-up still removes it only if no other post uses it)."""
        before = {t.term_id for t in run.terms_before.get(term.taxonomy, [])}
        argv = commands.term_list_argv(term.taxonomy)
        note = f"{_NOUN_JA[term.taxonomy]}「{term.label}」が作成されたかどうか確認できませんでした。"

        def new_terms(stdout: str) -> list[Resource]:
            found = find_term(term, [t for t in parse_term_list(stdout) if t.term_id not in before])
            return [Resource(term.taxonomy, found.term_id, term.label)] if found else []

        self._steps.discover(run, argv, "作成途中のカテゴリ・タグの確認", note, new_terms)

    def _list(self, run: PublishRun, taxonomy: Taxonomy, purpose_ja: str) -> list[SiteTerm]:
        result = self._steps.run(run, commands.term_list_argv(taxonomy), purpose_ja)
        try:
            return parse_term_list(result.stdout)
        except (ValueError, KeyError, TypeError):
            raise StepError(
                PublishErrorCode.PUBLISH_FAILED, f"{taxonomy} の一覧を読み取れませんでした"
            ) from None


def _taxonomies(terms: Collection[WantedTerm]) -> list[Taxonomy]:
    return list(dict.fromkeys(term.taxonomy for term in terms))
