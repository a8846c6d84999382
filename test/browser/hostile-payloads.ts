/**
 * A hostile message body: every way mail HTML has been used to run script, navigate, submit,
 * embed or phone home, each pointing at its own path on the hit server so that any effect is
 * counted. Image paths may load after "show images"; every other path must never be hit.
 */
export function hostileHtml(base: string): string {
  return [
    '<p id="hostile-marker">Hostile mail body</p>',
    `<script>fetch('${base}/never-script');alert('script')</script>`,
    `<img src="${base}/img-onerror.png" onerror="fetch('${base}/never-onerror');alert('onerror')">`,
    `<img src="x" onerror="fetch('${base}/never-onerror-relative')">`,
    `<img src="${base}/pixel.png" width="1" height="1" alt="">`,
    `<img srcset="${base}/never-srcset.png 2x" alt="">`,
    `<a href="javascript:fetch('${base}/never-jslink');alert('js')">javascript link</a>`,
    `<a href="  JaVaScRiPt:alert('js2')">obfuscated javascript link</a>`,
    `<form action="${base}/never-form" method="post"><input name="q" value="x"><button type="submit">Submit form</button></form>`,
    `<meta http-equiv="refresh" content="0;url=${base}/never-refresh">`,
    `<iframe src="${base}/never-iframe"></iframe>`,
    `<iframe srcdoc="<script>parent.location='${base}/never-srcdoc'</script>"></iframe>`,
    `<object data="${base}/never-object"></object><embed src="${base}/never-embed">`,
    `<div style="background-image:url('${base}/never-css-url.png')">css url()</div>`,
    `<style>body{background:url(${base}/never-style-element.png)} @import url(${base}/never-import.css);</style>`,
    `<link rel="stylesheet" href="${base}/never-link.css">`,
    `<table background="${base}/table-bg.png"><tr><td>table</td></tr></table>`,
    `<svg><image href="${base}/never-svg.png"/><script>fetch('${base}/never-svg-script')</script></svg>`,
    `<video poster="${base}/never-poster.png" src="${base}/never-video"></video>`,
    `<base href="${base}/never-base/">`,
    `<div onmouseover="fetch('${base}/never-mouseover')" style="padding:20px">hover me</div>`,
    `<a href="${base}/link-target" id="plain-link">a normal link</a>`,
  ].join('\n');
}

/** Prefix of the paths whose hit would prove a payload did something (all but the images). */
export const NEVER_PREFIX = 'never-';
