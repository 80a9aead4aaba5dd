import type { InstrumentImportRow } from './partner.schemas.js';

/**
 * The listed instruments of the sandbox catalogue: real codes of the three exchanges with reference
 * prices that are plausible but illustrative, not quotes. ISINs are given only where two independent
 * lists agree and the check digit holds; otherwise null.
 *
 * Trading rules: BRVM equities trade in lots of 1 with a +-7.5 % band (the default of the import),
 * on a tick of 5 XOF, or of 1 XOF for a share priced under 1,000 XOF. BRVM bonds: a tick of 1 XOF.
 * BVMAC equities: a tick of 5 XAF, +-10 %. GSE shares: a tick of one pesewa (0.01 GHS), +-10 %.
 */
const XOF = 100;

function brvmShare(ticker: string, name: string, xof: number, isin: string | null = null): InstrumentImportRow {
  return {
    code: `${ticker}.BRVM`,
    class: 'equities',
    name,
    isin,
    reference_price_cents: xof * XOF,
    tick_size_cents: xof < 1000 ? XOF : 5 * XOF,
    lot_size: 1,
  };
}

// The exchange's bond symbols are ISSUER.Onn; a ticker here has no dot, so TPCI.O70 is TPCIO70. For
// issues whose number is not given, the ticker is the issuer, coupon and maturity.
function brvmBond(ticker: string, name: string, xof: number): InstrumentImportRow {
  return { code: `${ticker}.BRVM`, class: 'bonds', name, isin: null, reference_price_cents: xof * XOF, tick_size_cents: XOF, lot_size: 1 };
}

function bvmacShare(ticker: string, name: string, xaf: number): InstrumentImportRow {
  return {
    code: `${ticker}.BVMAC`,
    class: 'equities',
    name,
    isin: null,
    reference_price_cents: xaf * 100,
    tick_size_cents: 500,
    lot_size: 1,
  };
}

function gseShare(ticker: string, name: string, pesewas: number): InstrumentImportRow {
  return { code: `${ticker}.GSE`, class: 'equities', name, isin: null, reference_price_cents: pesewas, tick_size_cents: 1, lot_size: 1 };
}

export const LISTED_INSTRUMENTS: readonly InstrumentImportRow[] = [
  brvmShare('ABJC', "Servair Abidjan Côte d'Ivoire", 2_010, 'CI0000000600'),
  brvmShare('BICB', "Banque Internationale pour l'Industrie et le Commerce du Bénin", 5_000),
  brvmShare('BICC', "BICI Côte d'Ivoire", 19_500, 'CI0000000014'),
  brvmShare('BNBC', "Bernabé Côte d'Ivoire", 1_250, 'CI0000000048'),
  brvmShare('BOAB', 'Bank of Africa Bénin', 5_300, 'BJ0000000048'),
  brvmShare('BOABF', 'Bank of Africa Burkina Faso', 3_600),
  brvmShare('BOAC', "Bank of Africa Côte d'Ivoire", 6_500),
  brvmShare('BOAM', 'Bank of Africa Mali', 2_000),
  brvmShare('BOAN', 'Bank of Africa Niger', 4_150),
  brvmShare('BOAS', 'Bank of Africa Sénégal', 4_300, 'SN0000000332'),
  brvmShare('CABC', "Sicable Côte d'Ivoire", 1_400, 'CI0000000154'),
  brvmShare('CBIBF', 'Coris Bank International Burkina Faso', 10_000),
  brvmShare('CFAC', "CFAO Motors Côte d'Ivoire", 1_395, 'CI0000000220'),
  brvmShare('CIEC', "Compagnie Ivoirienne d'Électricité", 2_300, 'CI0000000212'),
  brvmShare('ECOC', "Ecobank Côte d'Ivoire", 13_500),
  brvmShare('ETIT', 'Ecobank Transnational Incorporated', 18, 'TG0000000132'),
  brvmShare('FTSC', "Filtisac Côte d'Ivoire", 1_800, 'CI0000000121'),
  brvmShare('LNBB', 'Loterie Nationale du Bénin', 4_000),
  brvmShare('NEIC', "NEI-CEDA Côte d'Ivoire", 600, 'CI0000000618'),
  brvmShare('NSBC', "NSIA Banque Côte d'Ivoire", 9_500),
  brvmShare('NTLC', "Nestlé Côte d'Ivoire", 7_000),
  brvmShare('ONTBF', 'Onatel Burkina Faso', 2_400, 'BF0000000117'),
  brvmShare('ORAC', "Orange Côte d'Ivoire", 14_500),
  brvmShare('ORGT', 'Oragroup Togo', 2_500),
  brvmShare('PALC', "Palm Côte d'Ivoire", 7_600, 'CI0000000592'),
  brvmShare('PRSC', "Tractafric Motors Côte d'Ivoire", 3_900, 'CI0000000055'),
  brvmShare('SAFC', "Safca Côte d'Ivoire", 2_800, 'CI0000000022'),
  brvmShare('SCRC', "Sucrivoire Côte d'Ivoire", 1_100),
  brvmShare('SDCC', "Sodeci Côte d'Ivoire", 6_000, 'CI0000000204'),
  brvmShare('SDSC', "Africa Global Logistics Côte d'Ivoire", 1_500, 'CI0000000261'),
  brvmShare('SEMC', "Crown Siem Côte d'Ivoire", 900, 'CI0000000345'),
  brvmShare('SGBC', "Société Générale Côte d'Ivoire", 28_500, 'CI0000000030'),
  brvmShare('SHEC', "Vivo Energy Côte d'Ivoire", 1_800, 'CI0000000246'),
  brvmShare('SIBC', 'Société Ivoirienne de Banque', 6_000),
  brvmShare('SICC', "Sicor Côte d'Ivoire", 4_200, 'CI0000000113'),
  brvmShare('SIVC', "Erium Côte d'Ivoire", 900, 'CI0000000550'),
  brvmShare('SLBC', "Solibra Côte d'Ivoire", 29_000, 'CI0000000105'),
  brvmShare('SMBC', "SMB Côte d'Ivoire", 9_800, 'CI0000000170'),
  brvmShare('SNTS', 'Sonatel', 25_500, 'SN0000000019'),
  brvmShare('SOGC', "SOGB Côte d'Ivoire", 6_500, 'CI0000000162'),
  brvmShare('SPHC', "SAPH Côte d'Ivoire", 5_300, 'CI0000000196'),
  brvmShare('STAC', "Setao Côte d'Ivoire", 1_100, 'CI0000000352'),
  brvmShare('STBC', "Sitab Côte d'Ivoire", 15_000, 'CI0000000097'),
  brvmShare('SVOC', "Movis Côte d'Ivoire", 3_000),
  brvmShare('TTLC', "TotalEnergies Marketing Côte d'Ivoire", 2_400),
  brvmShare('TTLS', 'TotalEnergies Marketing Sénégal', 2_300, 'SN0000000357'),
  brvmShare('UNLC', "Unilever Côte d'Ivoire", 24_000, 'CI0000000287'),
  brvmShare('UNXC', "Uniwax Côte d'Ivoire", 700, 'CI0000000337'),

  brvmBond('TPCIO70', "État de Côte d'Ivoire 5.75% 2022-2037", 10_000),
  brvmBond('TPCI5902028', "État de Côte d'Ivoire 5.90% 2023-2028", 9_990),
  brvmBond('TPCI62030', "État de Côte d'Ivoire 6.00% 2023-2030", 10_000),
  brvmBond('EOS6152030', 'État du Sénégal 6.15% 2023-2030', 9_950),
  brvmBond('EOS6352033', 'État du Sénégal 6.35% 2023-2033', 10_050),

  bvmacShare('SAFACAM', 'Société Africaine Forestière et Agricole du Cameroun', 36_500),
  bvmacShare('SEMC', 'Société des Eaux Minérales du Cameroun', 37_000),
  bvmacShare('SOCAPALM', 'Société Camerounaise de Palmeraies', 29_500),

  gseShare('ACCESS', 'Access Bank Ghana', 500),
  gseShare('BOPP', 'Benso Oil Palm Plantation', 2_500),
  gseShare('CAL', 'CalBank', 20),
  gseShare('EGH', 'Ecobank Ghana', 750),
  gseShare('EGL', 'Enterprise Group', 250),
  gseShare('FML', 'Fan Milk', 350),
  gseShare('GCB', 'GCB Bank', 700),
  gseShare('GGBL', 'Guinness Ghana Breweries', 500),
  gseShare('GOIL', 'GOIL', 160),
  gseShare('MTNGH', 'MTN Ghana', 300),
  gseShare('SCB', 'Standard Chartered Bank Ghana', 2_200),
  gseShare('SOGEGH', 'Societe Generale Ghana', 180),
  gseShare('TLW', 'Tullow Oil', 1_190),
  gseShare('TOTAL', 'TotalEnergies Marketing Ghana', 1_500),
  gseShare('UNIL', 'Unilever Ghana', 1_700),
];
