import { elementEffect, hidesContent } from './hidden-style.js';

/** What is in force inside one open element. */
interface Frame {
  removed: boolean;
  invisible: boolean;
  zeroFont: boolean;
  transparent: boolean;
}

const ROOT: Frame = Object.freeze({ removed: false, invisible: false, zeroFont: false, transparent: false });

/**
 * Whether what is being read is seen by a reader, following open and close tags as the
 * walk of the sanitised HTML reports them (html-walk.ts: a close for every open, void
 * elements and those left open at the end included). `display:none`, `hidden`, `opacity:0`
 * and zero size hide an element and all it contains for good; `visibility`, font size and
 * colour are inherited and may be set back by a descendant, as in CSS. One frame per open
 * element: the stack is as deep as the walk's own.
 */
export class VisibilityStack {
  private readonly frames: Frame[] = [];

  private get top(): Frame {
    return this.frames[this.frames.length - 1] ?? ROOT;
  }

  /** Whether the innermost open element is laid out and painted (an image in it is seen). */
  get shown(): boolean {
    const top = this.top;
    return !top.removed && !top.invisible;
  }

  /** Whether text here can be read: shown, at a real size and in a visible colour. */
  get readable(): boolean {
    const top = this.top;
    return !top.removed && !top.invisible && !top.zeroFont && !top.transparent;
  }

  open(name: string, attributes: Readonly<Record<string, string>>): void {
    const parent = this.top;
    // Inside a removed element nothing can come back into sight, and an element with neither
    // a style nor `hidden` changes nothing (most of them): the parent's frame serves again.
    if (parent.removed || (attributes.style === undefined && !('hidden' in attributes) && !hidesContent(name))) {
      this.frames.push(parent);
      return;
    }
    const effect = elementEffect(name, attributes);
    this.frames.push({
      removed: effect.removes,
      invisible: effect.invisible ?? parent.invisible,
      zeroFont: effect.zeroFont ?? parent.zeroFont,
      transparent: effect.transparent ?? parent.transparent,
    });
  }

  close(): void {
    this.frames.pop();
  }
}
