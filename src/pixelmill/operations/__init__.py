"""Operations: the catalog and the one synchronous pipeline every surface uses.

``catalog`` (operation -> engine, price, default format), ``pipeline`` (the orchestration),
``params`` (engine lookup, parameter checks), ``inputs`` (reading and decoding under the plan's
caps), ``accounting`` (reserve, capture or release, history rows, the stale-hold sweep),
``results`` (output format, encode, store, sign; the ``Outcome``), ``schemas`` (the synchronous
surfaces' response bodies) and ``history`` (reading the history rows)."""
