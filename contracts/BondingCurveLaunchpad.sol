// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TransferHelper} from "./ERC20.sol";
import {Owned, ReentrancyGuard} from "./Owned.sol";
import {LaunchToken} from "./LaunchToken.sol";
import {AmmFactory} from "./AmmFactory.sol";
import {AmmPair} from "./AmmPair.sol";
import {IWETH} from "./WETH9.sol";

/// @title BondingCurveLaunchpad ("venue-a")
/// @notice Launches fixed-supply tokens on a bonding curve, then graduates them to an AMM pool.
///
/// Curve: constant product between the token reserve T and the quote reserve V + R, where R is the
/// real quote the curve holds and V a virtual quote reserve fixed per quote asset when the token
/// is created. Buying `net` quote gives T * net / (V + R + net) tokens; selling `t` tokens gives
/// (V + R) * t / (T + t) quote. Marginal price: (V + R) / T.
///
/// Fees: 1% of the quote amount of every trade (of what the buyer pays, of what the curve pays
/// out on a sell), half to the token's creator (held here until claimed), half to the platform
/// fee recipient (paid on every trade).
///
/// Graduation: when R reaches the quote asset's threshold (checked after each buy; the last buy
/// may overshoot), the remaining T tokens and R quote move into the token's AmmPair, whose virtual
/// quote reserve is the same V, so the price is continuous. The LP tokens go to the dead address:
/// that liquidity can never be withdrawn. From then on the token trades on the pool.
/// The pair is created (empty) together with the token so nobody can squat it before graduation.
///
/// ETH: when the quote asset is WETH, `buy` accepts ETH (msg.value) and wraps it; `sell` pays
/// WETH, `sellForETH` pays ETH; creator fees are paid in WETH.
contract BondingCurveLaunchpad is Owned, ReentrancyGuard {
    /// @notice Supply minted for every token, all of it into the curve.
    uint256 public constant TOKEN_SUPPLY = 1_000_000_000 * 1e18;
    /// @notice Trade fee in basis points of the quote amount.
    uint256 public constant TRADE_FEE_BPS = 100;
    /// @notice Creator's share of the trade fee, in basis points of the fee.
    uint256 public constant CREATOR_FEE_SHARE_BPS = 5000;
    /// @notice Receiver of graduated pools' LP tokens; nobody has its key.
    address public constant LP_LOCK = 0x000000000000000000000000000000000000dEaD;

    struct QuoteConfig {
        bool allowed;
        uint256 virtualReserve;
        uint256 graduationThreshold;
    }

    struct Curve {
        address creator;
        address quote;
        address pair;
        uint256 virtualQuoteReserve;
        uint256 graduationThreshold;
        uint256 tokenReserve;
        uint256 quoteReserve;
        bool graduated;
        uint256 creatorFeesEarned;
        uint256 creatorFeesClaimed;
    }

    address public immutable factory;
    address public immutable weth;
    address public platformFeeRecipient;
    mapping(address => QuoteConfig) public quoteConfig;
    /// @notice Every token created here, in creation order.
    address[] public allTokens;
    mapping(address => Curve) private curves;

    event TokenCreated(
        address indexed token, address indexed creator, address indexed quote, string name, string symbol, uint256 supply
    );
    /// @param quoteAmount Buy: quote paid, fee included. Sell: quote received, fee deducted.
    /// @param priceAfter Marginal price after the trade: quote base units per whole token (1e18 units), times 1e18.
    event Trade(
        address indexed token,
        address indexed trader,
        bool isBuy,
        uint256 quoteAmount,
        uint256 tokenAmount,
        uint256 creatorFee,
        uint256 platformFee,
        uint256 priceAfter
    );
    event Graduated(address indexed token, address indexed pair, uint256 quoteAmount, uint256 tokenAmount);
    event CreatorFeesClaimed(address indexed token, address indexed creator, address indexed to, uint256 amount);
    event QuoteAssetConfigured(address indexed quote, bool allowed, uint256 virtualReserve, uint256 graduationThreshold);
    event PlatformFeeRecipientSet(address indexed recipient);

    constructor(address factory_, address weth_, address platformFeeRecipient_) {
        require(platformFeeRecipient_ != address(0), "Launchpad: zero fee recipient");
        factory = factory_;
        weth = weth_;
        platformFeeRecipient = platformFeeRecipient_;
    }

    /// @notice Only WETH (unwrapping for sellForETH) may send ETH here.
    receive() external payable {
        require(msg.sender == weth, "Launchpad: ETH only from WETH");
    }

    // ----- owner -----

    /// @notice Allows a quote asset and sets its curve parameters for tokens created from now on. Owner only.
    /// @param virtualReserve Virtual quote reserve V (e.g. 1.5 WETH, 4,500 USDC).
    /// @param graduationThreshold Real quote reserve at which a token graduates.
    function setQuoteAsset(address quote, bool allowed, uint256 virtualReserve, uint256 graduationThreshold)
        external
        onlyOwner
    {
        if (allowed) {
            require(quote.code.length > 0, "Launchpad: quote asset has no code");
            require(virtualReserve > 0 && graduationThreshold > 0, "Launchpad: zero curve parameter");
        }
        quoteConfig[quote] = QuoteConfig(allowed, virtualReserve, graduationThreshold);
        emit QuoteAssetConfigured(quote, allowed, virtualReserve, graduationThreshold);
    }

    /// @notice Sets who receives the platform half of trade fees. Owner only.
    function setPlatformFeeRecipient(address recipient) external onlyOwner {
        require(recipient != address(0), "Launchpad: zero fee recipient");
        platformFeeRecipient = recipient;
        emit PlatformFeeRecipientSet(recipient);
    }

    // ----- launch and trade -----

    /// @notice Creates a token whose whole supply sits in a new bonding curve; the caller is its creator.
    /// @param quoteAsset An allowed quote asset (WETH for ETH, or e.g. USDC).
    /// @return token The new token.
    function createToken(string calldata name, string calldata symbol, address quoteAsset)
        external
        nonReentrant
        returns (address token)
    {
        QuoteConfig memory config = quoteConfig[quoteAsset];
        require(config.allowed, "Launchpad: quote asset not allowed");
        require(bytes(name).length > 0 && bytes(name).length <= 64, "Launchpad: name must be 1-64 bytes");
        require(bytes(symbol).length > 0 && bytes(symbol).length <= 16, "Launchpad: symbol must be 1-16 bytes");
        token = address(new LaunchToken(name, symbol, TOKEN_SUPPLY, address(this)));
        address pair = AmmFactory(factory).createLaunchPair(token, quoteAsset, config.virtualReserve, address(0), 0);
        curves[token] = Curve({
            creator: msg.sender,
            quote: quoteAsset,
            pair: pair,
            virtualQuoteReserve: config.virtualReserve,
            graduationThreshold: config.graduationThreshold,
            tokenReserve: TOKEN_SUPPLY,
            quoteReserve: 0,
            graduated: false,
            creatorFeesEarned: 0,
            creatorFeesClaimed: 0
        });
        allTokens.push(token);
        emit TokenCreated(token, msg.sender, quoteAsset, name, symbol, TOKEN_SUPPLY);
    }

    /// @notice Buys tokens with exactly `quoteIn` quote (fee included). For a WETH-quoted token,
    /// send msg.value == quoteIn to pay in ETH, or no ETH to pay WETH (approved).
    /// @param minTokensOut Reverts unless at least this many tokens are bought.
    /// @param to Receiver of the tokens.
    /// @return tokensOut Tokens sent to `to`.
    function buy(address token, uint256 quoteIn, uint256 minTokensOut, address to)
        external
        payable
        nonReentrant
        returns (uint256 tokensOut)
    {
        Curve storage c = _activeCurve(token);
        require(quoteIn > 0, "Launchpad: zero amount");
        require(to != address(0), "Launchpad: zero recipient");
        if (msg.value > 0) {
            require(c.quote == weth, "Launchpad: ETH sent for a non-WETH quote");
            require(msg.value == quoteIn, "Launchpad: msg.value must equal quoteIn");
            IWETH(weth).deposit{value: msg.value}();
        } else {
            TransferHelper.safeTransferFrom(c.quote, msg.sender, address(this), quoteIn);
        }
        uint256 fee = (quoteIn * TRADE_FEE_BPS) / 10_000;
        uint256 net = quoteIn - fee;
        tokensOut = (c.tokenReserve * net) / (c.virtualQuoteReserve + c.quoteReserve + net);
        require(tokensOut > 0, "Launchpad: amount too small");
        require(tokensOut >= minTokensOut, "Launchpad: tokens out below minimum");
        c.tokenReserve -= tokensOut;
        c.quoteReserve += net;
        (uint256 creatorFee, uint256 platformFee) = _chargeFee(c, fee);
        TransferHelper.safeTransfer(token, to, tokensOut);
        emit Trade(token, msg.sender, true, quoteIn, tokensOut, creatorFee, platformFee, _price(c));
        if (c.quoteReserve >= c.graduationThreshold) _graduate(token, c);
    }

    /// @notice Sells `tokensIn` (approved) back to the curve and sends the quote (WETH for ETH) to `to`.
    /// @param minQuoteOut Reverts unless at least this much quote, after the fee, is paid out.
    /// @return quoteOut Quote sent to `to`.
    function sell(address token, uint256 tokensIn, uint256 minQuoteOut, address to)
        external
        nonReentrant
        returns (uint256 quoteOut)
    {
        require(to != address(0), "Launchpad: zero recipient");
        quoteOut = _sell(token, tokensIn, minQuoteOut);
        TransferHelper.safeTransfer(curves[token].quote, to, quoteOut);
    }

    /// @notice Like `sell` for a WETH-quoted token, but pays ETH.
    function sellForETH(address token, uint256 tokensIn, uint256 minQuoteOut, address to)
        external
        nonReentrant
        returns (uint256 quoteOut)
    {
        require(_activeCurve(token).quote == weth, "Launchpad: quote asset is not WETH");
        require(to != address(0), "Launchpad: zero recipient");
        quoteOut = _sell(token, tokensIn, minQuoteOut);
        IWETH(weth).withdraw(quoteOut);
        TransferHelper.safeTransferETH(to, quoteOut);
    }

    /// @notice Sends the creator's unclaimed fees (in the quote asset) to `to`. Creator only.
    /// @return amount Quote sent to `to`.
    function claimCreatorFees(address token, address to) external nonReentrant returns (uint256 amount) {
        Curve storage c = curves[token];
        require(c.creator != address(0), "Launchpad: unknown token");
        require(msg.sender == c.creator, "Launchpad: caller is not the creator");
        require(to != address(0), "Launchpad: zero recipient");
        amount = c.creatorFeesEarned - c.creatorFeesClaimed;
        require(amount > 0, "Launchpad: nothing to claim");
        c.creatorFeesClaimed = c.creatorFeesEarned;
        TransferHelper.safeTransfer(c.quote, to, amount);
        emit CreatorFeesClaimed(token, msg.sender, to, amount);
    }

    // ----- views -----

    /// @notice Tokens a buy of `quoteIn` (fee included) would give now.
    function quoteBuy(address token, uint256 quoteIn) external view returns (uint256 tokensOut) {
        Curve storage c = _activeCurve(token);
        uint256 net = quoteIn - (quoteIn * TRADE_FEE_BPS) / 10_000;
        return (c.tokenReserve * net) / (c.virtualQuoteReserve + c.quoteReserve + net);
    }

    /// @notice Quote a sell of `tokensIn` would pay now, after the fee.
    function quoteSell(address token, uint256 tokensIn) external view returns (uint256 quoteOut) {
        Curve storage c = _activeCurve(token);
        uint256 gross = _sellGross(c, tokensIn);
        return gross - (gross * TRADE_FEE_BPS) / 10_000;
    }

    /// @notice Marginal curve price, same scale as `Trade.priceAfter`.
    function currentPrice(address token) external view returns (uint256) {
        return _price(_activeCurve(token));
    }

    /// @notice Full curve state of `token` (all zero for an unknown token).
    function getCurve(address token) external view returns (Curve memory) {
        return curves[token];
    }

    /// @notice Creator fees of `token`: total earned and already claimed.
    function creatorFees(address token) external view returns (uint256 earned, uint256 claimed) {
        return (curves[token].creatorFeesEarned, curves[token].creatorFeesClaimed);
    }

    /// @notice Number of tokens created so far.
    function allTokensLength() external view returns (uint256) {
        return allTokens.length;
    }

    // ----- internals -----

    function _activeCurve(address token) private view returns (Curve storage c) {
        c = curves[token];
        require(c.creator != address(0), "Launchpad: unknown token");
        require(!c.graduated, "Launchpad: token graduated, trade it on its AMM pool");
    }

    function _sell(address token, uint256 tokensIn, uint256 minQuoteOut) private returns (uint256 quoteOut) {
        Curve storage c = _activeCurve(token);
        require(tokensIn > 0, "Launchpad: zero amount");
        TransferHelper.safeTransferFrom(token, msg.sender, address(this), tokensIn);
        uint256 gross = _sellGross(c, tokensIn);
        uint256 fee = (gross * TRADE_FEE_BPS) / 10_000;
        quoteOut = gross - fee;
        require(quoteOut > 0, "Launchpad: amount too small");
        require(quoteOut >= minQuoteOut, "Launchpad: quote out below minimum");
        c.tokenReserve += tokensIn;
        c.quoteReserve -= gross;
        (uint256 creatorFee, uint256 platformFee) = _chargeFee(c, fee);
        emit Trade(token, msg.sender, false, quoteOut, tokensIn, creatorFee, platformFee, _price(c));
    }

    function _sellGross(Curve storage c, uint256 tokensIn) private view returns (uint256 gross) {
        gross = ((c.virtualQuoteReserve + c.quoteReserve) * tokensIn) / (c.tokenReserve + tokensIn);
        require(gross <= c.quoteReserve, "Launchpad: insufficient quote reserve");
    }

    /// @dev Credits the creator's half and pays the platform's half of `fee` (held by this contract).
    function _chargeFee(Curve storage c, uint256 fee) private returns (uint256 creatorFee, uint256 platformFee) {
        creatorFee = (fee * CREATOR_FEE_SHARE_BPS) / 10_000;
        platformFee = fee - creatorFee;
        c.creatorFeesEarned += creatorFee;
        if (platformFee > 0) TransferHelper.safeTransfer(c.quote, platformFeeRecipient, platformFee);
    }

    function _price(Curve storage c) private view returns (uint256) {
        return ((c.virtualQuoteReserve + c.quoteReserve) * 1e36) / c.tokenReserve;
    }

    function _graduate(address token, Curve storage c) private {
        uint256 tokenAmount = c.tokenReserve;
        uint256 quoteAmount = c.quoteReserve;
        c.graduated = true;
        c.tokenReserve = 0;
        c.quoteReserve = 0;
        TransferHelper.safeTransfer(token, c.pair, tokenAmount);
        TransferHelper.safeTransfer(c.quote, c.pair, quoteAmount);
        AmmPair(c.pair).mint(LP_LOCK);
        emit Graduated(token, c.pair, quoteAmount, tokenAmount);
    }
}
