/* For the Wine test prefix only (scripts/wine-build): Rust's std on Windows
 * takes its random numbers from ProcessPrng in bcryptprimitives.dll, which
 * Debian 12's Wine 8.0 does not have (Wine added it in 9.x). This stands in
 * for it, over RtlGenRandom (advapi32's SystemFunction036). Never shipped. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) {
            return FALSE;
        }
        data += n;
        len -= n;
    }
    return TRUE;
}
