/* errno.c: the kernel's -NOM_E* results as newlib errno values. */
#include <errno.h>
#include <nom/syscall.h>

int nom_errno_from(int64_t result)
{
    switch (result >= 0 ? 0 : -result) {
    case 0: return 0;
    case NOM_EPERM: return EPERM;
    case NOM_ENOENT: return ENOENT;
    case NOM_EINVAL: return EINVAL;
    case NOM_EFAULT: return EFAULT;
    case NOM_ENOMEM: return ENOMEM;
    case NOM_EBUSY: return EBUSY;
    case NOM_ENOSYS: return ENOSYS;
    case NOM_EAGAIN: return EAGAIN;
    default: return EIO;
    }
}
