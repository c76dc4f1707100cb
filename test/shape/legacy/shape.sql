-- Shapes the small CIS export of the shaping tests: one row per supply point, joint holders side by side, the
-- balance in pence with the legacy sign (+ means the customer owes), notes whose account numbers lost their zeros.

-- One row per live account: its first supply point's row.
CREATE VIEW accounts AS
SELECT ACCOUNT_NO AS external_account_number,
       TITLE_1 || ' ' || FORENAME_1 || ' ' || SURNAME_1 AS billing_name,
       EMAIL_1 AS billing_email,
       ADDR_1 AS "billing_address.street_address",
       POSTCODE AS "billing_address.postal_code",
       CAST(-CAST(BALANCE_PENCE AS INTEGER) / 100 AS VARCHAR) AS transfer_balance,
       _file, _line
FROM cis_accounts
WHERE STATUS = 'LIVE'
QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1;

-- Joint holders side by side become one customer each, the first holder first.
CREATE VIEW customers AS
SELECT * EXCLUDE (holder) FROM (
  SELECT ACCOUNT_NO AS external_account_number, 1 AS holder, TITLE_1 AS title, FORENAME_1 AS given_name,
         SURNAME_1 AS family_name, EMAIL_1 AS email, PHONE_1 AS mobile, _file, _line
  FROM cis_accounts WHERE STATUS = 'LIVE'
  QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1
  UNION ALL
  SELECT ACCOUNT_NO, 2, NULL, FORENAME_2, SURNAME_2, NULL, NULL, _file, _line
  FROM cis_accounts WHERE STATUS = 'LIVE' AND FORENAME_2 IS NOT NULL
  QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1
)
ORDER BY external_account_number, holder;

CREATE VIEW supply_addresses AS
SELECT ACCOUNT_NO AS external_account_number, ADDR_1 AS supply_address1, POSTCODE AS supply_postcode,
       SUPPLY_START AS customer_at_supply_address_from_date, _file, _line
FROM cis_accounts
WHERE STATUS = 'LIVE'
QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1;

-- Excel stripped the zeros of the notes' account numbers; only notes of live accounts go.
CREATE VIEW notes AS
SELECT lpad("Account No", 8, '0') AS external_account_number,
       "Note Text" AS body,
       strftime(strptime(Created, '%d/%m/%Y %H:%M'), '%Y-%m-%dT%H:%M:00Z') AS created_at,
       n._file, n._line
FROM cis_notes AS n
WHERE lpad("Account No", 8, '0') IN (SELECT ACCOUNT_NO FROM cis_accounts WHERE STATUS = 'LIVE');
