/*
 * nom/bb.h: reading the bulletin board (paper 3.5, DESIGN.md "The bulletin board").
 *
 * Contract: the board is kernel-written, mapped read-only at NOM_BB_ADDR for the
 * application's whole life. Any field read directly through nom_bb() may be torn while the
 * kernel updates it; a consistent view comes only from the snapshot readers, which copy under
 * the seqlock (retry while the generation is odd or changed during the copy). The readers
 * never block and never make a system call; they spin only while the kernel is mid-write.
 * Fields the kernel writes once at boot (tsc_hz, boot_tsc, magic) may be read directly.
 */
#ifndef NOM_BB_H
#define NOM_BB_H

#include <stdint.h>
#include <nom/abi.h>

/* The live board (read-only). */
const volatile struct nom_bb *nom_bb(void);

/* Copies the whole board consistently into *out; returns the generation it copied
 * (even). Never fails. */
uint64_t nom_bb_snapshot(struct nom_bb *out);

/* The same seqlock copy from any board image (host tests point it at a fake board). */
uint64_t nom_bb_snapshot_from(const volatile struct nom_bb *bb, struct nom_bb *out);

/* Index on the board of the index-th (0-based) device with vendor:device, copied into *out
 * when out is not NULL; -1 if there is no such device. */
int nom_bb_find_device(uint16_t vendor, uint16_t device, int index, struct nom_bb_device *out);

/* Copies price slot slot consistently into *out; 0, or -1 if slot is out of range. */
int nom_bb_price(unsigned slot, struct nom_bb_price *out);

/* This application's id (struct nom_start_info.app_id): its row on the board, its notify
 * address. */
uint32_t nom_self_id(void);

/* Copies application row app_id consistently into *out; 0, or -1 if there is no such row. */
int nom_bb_app(uint32_t app_id, struct nom_bb_app *out);

#endif /* NOM_BB_H */
