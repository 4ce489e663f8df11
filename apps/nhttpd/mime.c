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
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    if (dot != NULL)
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (strcmp(dot + 1, types[i].ext) == 0)
                return types[i].type;
    return "application/octet-stream";
}
