/**
 * The words around a one-time code, in the thirteen languages of docs/codes.md: what
 * announces a code (keywords) and what announces some other number (negatives). All are
 * matched on NFKC-normalised text, case-insensitively. Latin and Cyrillic words match at a
 * word start (so "tel" is not found in "hotel"); CJK words match anywhere, as CJK text has
 * no spaces.
 */

/** Words (or word stems) that announce a one-time code, grouped by language for review. */
const KEYWORD_WORDS = [
  // Any word containing one of these stems: code, codes, passcode, Bestätigungscode,
  // verificatiecode, inlogcode, codice, código/codigo, kod/kodu/kodunuz, код/кода/кодом.
  // The lookahead finds the stem once per word; `\p{L}*stem\p{L}*` instead would retry the
  // stem at every split of a long word that fails at its end ("codecode…code1"): quadratic.
  String.raw`(?=\p{L}*(?:code|codic|c[óo]dig|kod|код))\p{L}+`,
  // English and shared abbreviations.
  'otp', 'pin', 'tan', 'token', 'one-time password', 'one time password',
  // German, French, Spanish, Italian, Dutch, Polish, Russian, Turkish.
  'einmalpasswort', 'mot de passe à usage unique', 'clave', 'password monouso', 'eenmalig wachtwoord',
  String.raw`hasło jednorazowe`, String.raw`jednorazow\p{L}*`, String.raw`одноразов\p{L}*`,
  String.raw`şifre\p{L}*`, 'tek kullanımlık',
];

/** CJK keywords: Chinese (simplified and traditional), Japanese, Korean. */
const KEYWORD_CJK = [
  '验证码', '驗證碼', '校验码', '校驗碼', '动态码', '動態碼', '动态密码', '動態密碼', '确认码', '確認碼',
  '安全码', '安全碼', '验证代码', '一次性密码',
  '認証コード', '確認コード', '認証番号', '確認番号', 'ワンタイムパスワード', 'ワンタイムコード',
  'セキュリティコード', '検証コード', 'パスコード', 'コード',
  '인증 ?코드', '인증 ?번호', '확인 ?코드', '보안 ?코드', '일회용 ?비밀번호', '코드',
];

/**
 * Stems that announce another kind of number: orders, invoices, tracking, phones, postal
 * codes, prices and amounts, bookings, customer and ticket numbers, promo codes, and
 * "code" in other senses (QR code, source code, code of conduct).
 */
const NEGATIVE_STEMS = [
  // English
  'invoice', 'receipt', 'tracking', 'track', 'shipment', 'parcel', 'package', 'phone', 'call',
  'fax', 'zip', 'postal', 'postcode', 'zipcode', 'price', 'total', 'subtotal', 'amount', 'balance',
  'customer', 'member', 'account number', 'acct', 'ending', 'card', 'reference', 'booking',
  'reservation', 'ticket', 'case', 'item', 'sku', 'seat', 'room', 'gate', 'flight', 'meeting',
  'promo', 'coupon', 'discount', 'voucher', 'gift', 'checkout', 'sale', 'number', 'serial',
  'version', 'build', 'commit', 'issue', 'pull', 'deploy', 'patient', 'iban', 'vat', 'extension',
  'conduct', 'source', 'barcode', 'area', 'authoriz', 'authoris', 'approval', 'country', 'decod', 'encod', 'unicode', 'codec', 'qr',
  // German
  'bestell', 'rechnung', 'sendung', 'paket', 'telefon', 'hotline', 'plz', 'postleitzahl', 'preis',
  'betrag', 'summe', 'gesamt', 'kunden', 'buchung', 'gutschein', 'rabatt', 'aktion', 'artikel',
  'nummer', 'steuer', 'autorisierung',
  // French
  'commande', 'factur', 'suivi', 'colis', 'téléphone', 'prix', 'montant', 'réservation', 'client',
  'réduction', 'numéro', 'siret', 'tva', 'autorisation',
  // Spanish
  'pedido', 'factura', 'seguimiento', 'envío', 'paquete', 'teléfono', 'precio', 'importe', 'reserva',
  'cupón', 'descuento', 'número', 'cliente', 'autorizaci',
  // Portuguese
  'encomenda', 'fatura', 'rastreamento', 'rastreio', 'telefone', 'ligue', 'preço', 'valor',
  'cupom', 'desconto', 'cnpj', 'cpf', 'referência', 'multibanco', 'autorizaç',
  // Italian
  'ordine', 'fattura', 'spedizione', 'tracciamento', 'pacco', 'telefono', 'postale', 'prezzo',
  'importo', 'totale', 'prenotazione', 'sconto', 'numero', 'fiscale', 'iva', 'autorizzazion',
  // Dutch
  'bestel', 'factuur', 'zending', 'pakket', 'telefoon', 'klantenservice', 'prijs', 'bedrag', 'totaal',
  'subtotaal', 'boeking', 'korting', 'klantnummer', 'btw', 'autorisatie',
  // Polish
  'zamówieni', 'faktur', 'przesyłk', 'paczk', 'śledzeni', 'infolinia', 'pocztow', 'cena', 'kwot',
  'suma', 'rezerwacj', 'rabat', 'numer', 'rachun', 'autoryzac',
  // Russian
  'заказ', 'счёт', 'счет', 'накладн', 'трек', 'отслежив', 'посылк', 'телефон', 'индекс', 'цена',
  'стоимост', 'сумм', 'итого', 'брониров', 'промо', 'скидк', 'номер', 'инн', 'авторизац',
  // Turkish
  'sipariş', 'kargo', 'takip', 'müşteri', 'posta', 'fiyat', 'tutar', 'toplam', 'rezervasyon',
  'indirim', 'kupon', 'numara', 'vergi', 'provizyon',
];

/** Short negatives that must be whole words ("tel" but not "hotel", "cap" but not "capital"). */
const NEGATIVE_WORDS = ['tel', 'tél', 'тел', 'ext', 'cap', 'cep', 'n°', 'nº', 'n.º'];

/**
 * Negatives that need their own pattern: "order" but not "in order to"; the labels "ID",
 * "No", "Nr", "Ref" only when a number follows ("ID: 4821", "No. 12"), since as words they
 * are everywhere ("No one will ask for this code").
 */
const NEGATIVE_PATTERNS = [
  String.raw`(?<![\p{L}\p{N}])(?<!in )order`,
  String.raw`(?<![\p{L}\p{N}])(?:id|no|nr|ref)\.?\s?[:#]?\s?(?=\d)`,
];

/** CJK negatives (no word boundaries in CJK text). */
const NEGATIVE_CJK = [
  '订单', '訂單', '发票', '發票', '物流', '快递', '快遞', '运单', '運單', '单号', '單號', '电话', '電話',
  '客服', '邮编', '郵遞區號', '价格', '價格', '金额', '金額', '合计', '合計', '总计', '總計', '优惠',
  '優惠', '预订', '預訂', '编号', '編號', '号码', '號碼',
  '注文', '請求', '領収', '配送', '発送', '追跡', '伝票', '問い合わせ番号', '電話番号', '郵便', '〒',
  '価格', '金額', '合計', '税込', '予約', 'クーポン', '会員番号',
  '주문', '송장', '배송', '택배', '전화', '고객센터', '우편번호', '가격', '금액', '합계', '예약', '쿠폰',
  '할인', '사업자',
];

const LETTER_BEFORE = String.raw`(?<![\p{L}\p{N}])`;
const LETTER_AFTER = String.raw`(?![\p{L}\p{N}])`;

const escape = (word: string): string => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Finds the words announcing a code. */
export const KEYWORD = new RegExp(
  `${LETTER_BEFORE}(?:${KEYWORD_WORDS.join('|')})${LETTER_AFTER}|${KEYWORD_CJK.join('|')}`,
  'giu',
);

/** Finds the words announcing some other number. */
export const NEGATIVE = new RegExp(
  [
    `${LETTER_BEFORE}(?:${NEGATIVE_STEMS.map(escape).join('|')})`,
    `${LETTER_BEFORE}(?:${NEGATIVE_WORDS.map(escape).join('|')})${LETTER_AFTER}`,
    ...NEGATIVE_PATTERNS,
    NEGATIVE_CJK.map(escape).join('|'),
    // Number signs: "#4821", "№ 48210391".
    '[#№]',
  ].join('|'),
  'giu',
);

/** A currency right before a number: "$ 129", "€129", "R$ 149", "EUR 24". */
export const CURRENCY_BEFORE = /(?:[$€£¥₽₺₩₹]|\b(?:eur|usd|gbp|chf|pln|rub|try|jpy|cny|krw|brl|r\$))\s?$/iu;

/**
 * What makes a number a quantity rather than a code when it follows: a currency, a percent,
 * or a unit of time, distance, weight or size, in the thirteen languages.
 */
export const UNIT_AFTER = new RegExp(
  String.raw`^\s?(?:[%$€£¥₽₺₩₹円元원분초일명개件個秒天]|` +
    String.raw`(?:eur|usd|gbp|chf|pln|zł|kr|rub|руб|р\.|tl|try|jpy|cny|krw|brl|` +
    String.raw`min|mins|minutes?|minuten|minutos?|minuti|minuty?|минут\p{L}*|dakika|` +
    String.raw`sec|secs|seconds?|sekunden|segundos?|secondi|секунд\p{L}*|saniye|` +
    String.raw`h|hrs?|hours?|std|stunden|heures?|horas?|ore|uur|godzin\p{L}*|час\p{L}*|saat|` +
    String.raw`days?|tage?n?|jours?|d[ií]as|giorni|dagen|dni|дн\p{L}*|gün|` +
    String.raw`km|kg|lbs?|gb|mb|kb|px|x)(?![\p{L}\p{N}]))`,
  'iu',
);
