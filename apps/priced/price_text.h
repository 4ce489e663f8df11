/*
 * price_text.h: the provider's price.txt (tools/priceprovider, GET /price.txt), parsed
 * strictly: one line of space-separated `key=value` words,
 *     resource=bandwidth unit=$/Gbit price=1.000000 timestamp=1763790000.123456 sequence=3
 * with a final newline. resource, unit, price and sequence are required; timestamp (Unix
 * seconds) may be missing; unknown keys are skipped (a newer provider may add some); a key
 * given twice is an error. Prices are decimal dollars, converted exactly (no floating point)
 * to micro-dollars, rounded half up beyond six decimals, as the board stores them (abi.h).
 */
#ifndef PRICED_PRICE_TEXT_H
#define PRICED_PRICE_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct price_quote {
    int64_t price_micro;   /* micro-dollars per Gbit, >= 0 */
    uint64_t timestamp_ns; /* when the provider's price took effect (Unix ns); 0: not given */
    uint64_t sequence;     /* the provider's: grows when the price in force changes */
};

/* Parses text[0, len) into *q. A price above max_price_micro, a negative price, a wrong
 * resource or unit, a malformed or missing field: -1 with a one-line reason in why. */
int price_text_parse(const char *text, size_t len, int64_t max_price_micro,
                     struct price_quote *q, char *why, size_t whylen);

/* Parses a non-negative decimal amount of dollars ("12", "0.5", "1.000000") into
 * micro-dollars, at most max; -1 if malformed, negative or too big. */
int price_parse_micro(const char *s, size_t len, int64_t max, int64_t *out);

/* Formats micro-dollars as dollars with six decimals ("1.000000") into buf. */
const char *price_format(int64_t micro, char *buf, size_t len);

#endif /* PRICED_PRICE_TEXT_H */
