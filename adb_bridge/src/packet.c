/* packet.c: the 24-byte ADB message header: encoding, validation, the payload byte-sum checksum. */
#include "adb_internal.h"

#include <stdio.h>

uint32_t adb_checksum(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

void adb_header_encode(const adb_header *h, uint8_t out[ADB_HEADER_SIZE])
{
    adb_put_u32(out, h->command);
    adb_put_u32(out + 4, h->arg0);
    adb_put_u32(out + 8, h->arg1);
    adb_put_u32(out + 12, h->data_length);
    adb_put_u32(out + 16, h->data_check);
    adb_put_u32(out + 20, h->magic);
}

static bool known_command(uint32_t c)
{
    return c == A_SYNC || c == A_CNXN || c == A_AUTH || c == A_OPEN || c == A_OKAY || c == A_WRTE || c == A_CLSE ||
           c == A_STLS;
}

const char *adb_command_name(uint32_t cmd, char buf[12])
{
    bool printable = true;
    for (int i = 0; i < 4; i++) {
        unsigned ch = (cmd >> (8 * i)) & 0xff;
        if (ch < 0x20 || ch > 0x7e)
            printable = false;
    }
    if (printable)
        snprintf(buf, 12, "%c%c%c%c", (char)(cmd & 0xff), (char)((cmd >> 8) & 0xff), (char)((cmd >> 16) & 0xff),
                 (char)(cmd >> 24));
    else
        snprintf(buf, 12, "0x%08x", cmd);
    return buf;
}

rd_status adb_header_decode(const uint8_t in[ADB_HEADER_SIZE], uint32_t max_payload, adb_header *h, rd_error *err)
{
    h->command = adb_get_u32(in);
    h->arg0 = adb_get_u32(in + 4);
    h->arg1 = adb_get_u32(in + 8);
    h->data_length = adb_get_u32(in + 12);
    h->data_check = adb_get_u32(in + 16);
    h->magic = adb_get_u32(in + 20);
    char name[12];
    if (h->magic != (h->command ^ 0xffffffffu))
        return rd_errorf(err, RD_E_DEVICE, "corrupt packet header: magic 0x%08x does not match command %s", h->magic,
                         adb_command_name(h->command, name));
    if (!known_command(h->command))
        return rd_errorf(err, RD_E_DEVICE, "corrupt packet header: unknown command %s",
                         adb_command_name(h->command, name));
    if (h->data_length > max_payload)
        return rd_errorf(err, RD_E_DEVICE, "oversized packet: %s carries %u bytes, the limit is %u",
                         adb_command_name(h->command, name), h->data_length, max_payload);
    return RD_OK;
}
