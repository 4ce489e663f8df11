/* mime.c: media types by file extension, shared by both document stores (docstore.h). */
#include "docstore.h"

#include <string.h>

const char *docstore_content_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {"html", "text/html"},        {"htm", "text/html"},
        {"txt", "text/plain"},        {"css", "text/css"},
        {"js", "text/javascript"},    {"json", "application/json"},
        {"png", "image/png"},         {"jpg", "image/jpeg"},
        {"jpeg", "image/jpeg"},       {"gif", "image/gif"},
        {"svg", "image/svg+xml"},     {"ico", "image/x-icon"},
        {"pdf", "application/pdf"},   {"xml", "application/xml"},
    };
    /* The extension: after the last '.' of the last path segment. One backward scan: newlib's
     * strrchr, which calls strchr until it fails, was 4 % of nhttpd's instructions per
     * request on nom (tools/bench/insn_profile.py). */
    const char *ext = NULL;
    for (const char *p = path + strlen(path); p > path && p[-1] != '/'; p--) {
        if (p[-1] == '.') {
            ext = p;
            break;
        }
    }
    if (ext != NULL)
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (strcmp(ext, types[i].ext) == 0)
                return types[i].type;
    return "application/octet-stream";
}
