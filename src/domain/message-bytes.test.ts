import { describe, expect, it } from 'vitest';
import { FRONT_ROOM_BYTES, joinWithRoomInFront, withPrefix } from './message-bytes.js';

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

describe('one copy of a message', () => {
  it('joins the chunks after the free room', () => {
    const received = joinWithRoomInFront([bytes(1, 2), bytes(), bytes(0xff, 0x80, 0)], 5);
    expect([...received]).toEqual([1, 2, 0xff, 0x80, 0]);
    expect(received.byteOffset).toBe(FRONT_ROOM_BYTES);
  });

  it('writes the prefix into the room: the same memory, nothing copied', () => {
    const received = joinWithRoomInFront([bytes(7, 8, 9)], 3);
    const stored = withPrefix([bytes(1, 2), bytes(), bytes(3)], received);
    expect([...stored]).toEqual([1, 2, 3, 7, 8, 9]);
    expect(stored.buffer).toBe(received.buffer);
    expect(stored.byteOffset + stored.byteLength).toBe(received.byteOffset + received.byteLength);
  });

  it('uses the room once: a second prefix gets a copy and leaves the first message as it was', () => {
    const received = joinWithRoomInFront([bytes(7)], 1);
    const first = withPrefix([bytes(1)], received);
    const second = withPrefix([bytes(2, 2)], received);
    expect([...first]).toEqual([1, 7]);
    expect([...second]).toEqual([2, 2, 7]);
    expect(second.buffer).not.toBe(received.buffer);
  });

  it('copies when the prefix is larger than the room, or the bytes have none', () => {
    const received = joinWithRoomInFront([bytes(5, 6)], 2);
    const big = new Uint8Array(FRONT_ROOM_BYTES + 1).fill(0xaa);
    const stored = withPrefix([big], received);
    expect(stored.byteLength).toBe(FRONT_ROOM_BYTES + 3);
    expect([...stored.subarray(FRONT_ROOM_BYTES - 1)]).toEqual([0xaa, 0xaa, 5, 6]);
    expect(stored.buffer).not.toBe(received.buffer);
    // Plain bytes (another caller than the SMTP listener): never written in front of.
    const whole = bytes(9, 9, 9, 4);
    expect([...withPrefix([bytes(1)], whole.subarray(3))]).toEqual([1, 4]);
    expect([...whole]).toEqual([9, 9, 9, 4]);
  });
});
