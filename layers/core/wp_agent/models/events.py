"""The events the Argo Note backend subscribes to (EventBridge): source and detail-types.

Part of the contract like the API: the services choose them, the EventBridge adapter sends them.
"""

from __future__ import annotations

SOURCE = "argo.wp-agent"
APPROVAL_REQUESTED = "Approval Requested"
RUN_COMPLETED = "Run Completed"
RUN_FAILED = "Run Failed"
ARTICLE_PUBLISHED = "Article Published"
ARTICLE_FAILED = "Article Failed"
DETAIL_TYPES = (APPROVAL_REQUESTED, RUN_COMPLETED, RUN_FAILED, ARTICLE_PUBLISHED, ARTICLE_FAILED)
