/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "elf-kind.h"

/* Bounds on a hostile file: headers read, and the section names' table. */
#define ELF_HEADERS_MAX 4096u
#define ELF_SHSTRTAB_MAX (64u * 1024u)

static bool read_at(int fd, void *buf, size_t len, uint64_t off) {
        return pread(fd, buf, len, (off_t) off) == (ssize_t) len;
}

static bool go_section_name(const char *names, size_t size, uint64_t name) {
        const char *n;

        if (name >= size)
                return false;
        n = names + name;
        if (!memchr(n, '\0', size - name))
                return false;
        return strcmp(n, ".note.go.buildid") == 0 || strcmp(n, ".go.buildinfo") == 0;
}

/* The ELF64 and ELF32 layouts differ in widths only: one body for both. */
#define INSPECT(Ehdr, Phdr, Shdr)                                                               \
        static void inspect_##Ehdr(int fd, const Ehdr *eh, struct elf_kind *ret) {              \
                char names[ELF_SHSTRTAB_MAX];                                                   \
                Shdr strtab;                                                                    \
                                                                                                \
                for (unsigned i = 0; i < eh->e_phnum && i < ELF_HEADERS_MAX; i++) {             \
                        Phdr ph;                                                                \
                                                                                                \
                        if (eh->e_phentsize != sizeof(ph) ||                                    \
                            !read_at(fd, &ph, sizeof(ph), eh->e_phoff + (uint64_t) i * sizeof(ph))) \
                                break;                                                          \
                        if (ph.p_type == PT_INTERP)                                             \
                                ret->dynamic = true;                                            \
                }                                                                               \
                if (eh->e_shentsize != sizeof(Shdr) || eh->e_shstrndx >= eh->e_shnum ||         \
                    !read_at(fd, &strtab, sizeof(strtab),                                       \
                             eh->e_shoff + (uint64_t) eh->e_shstrndx * sizeof(Shdr)))            \
                        return;                                                                 \
                if (strtab.sh_size == 0 || strtab.sh_size > sizeof(names) ||                    \
                    !read_at(fd, names, strtab.sh_size, strtab.sh_offset))                      \
                        return;                                                                 \
                for (unsigned i = 0; i < eh->e_shnum && i < ELF_HEADERS_MAX; i++) {             \
                        Shdr sh;                                                                \
                                                                                                \
                        if (!read_at(fd, &sh, sizeof(sh), eh->e_shoff + (uint64_t) i * sizeof(sh))) \
                                break;                                                          \
                        if (go_section_name(names, strtab.sh_size, sh.sh_name)) {               \
                                ret->go = true;                                                 \
                                break;                                                          \
                        }                                                                       \
                }                                                                               \
        }

INSPECT(Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr)
INSPECT(Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr)

int elf_kind_of(const char *path, struct elf_kind *ret) {
        _cleanup_close_ int fd = -EBADF;
        unsigned char ident[EI_NIDENT];
        struct stat st;

        *ret = (struct elf_kind) {};
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        ret->setid = (st.st_mode & (S_ISUID | S_ISGID)) != 0;
        if (!read_at(fd, ident, sizeof(ident), 0) || memcmp(ident, ELFMAG, SELFMAG) != 0)
                return 0;
        if (ident[EI_CLASS] == ELFCLASS64) {
                Elf64_Ehdr eh;

                if (!read_at(fd, &eh, sizeof(eh), 0))
                        return 0;
                ret->elf = true;
                inspect_Elf64_Ehdr(fd, &eh, ret);
        } else if (ident[EI_CLASS] == ELFCLASS32) {
                Elf32_Ehdr eh;

                if (!read_at(fd, &eh, sizeof(eh), 0))
                        return 0;
                ret->elf = true;
                inspect_Elf32_Ehdr(fd, &eh, ret);
        }
        return 0;
}
