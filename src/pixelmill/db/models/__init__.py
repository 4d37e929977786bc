"""All tables, one module each; importing this package registers them on ``Base.metadata``."""

from pixelmill.db.models.api_key import ApiKey
from pixelmill.db.models.credit_ledger import CreditLedgerEntry, CreditReservation
from pixelmill.db.models.processing_record import ProcessingRecord
from pixelmill.db.models.user import User

__all__ = ["ApiKey", "CreditLedgerEntry", "CreditReservation", "ProcessingRecord", "User"]
