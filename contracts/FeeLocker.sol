// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20, TransferHelper} from "./ERC20.sol";
import {IFeeReceiver} from "./AmmPair.sol";

/// @title FeeLocker
/// @notice Holds the LP tokens of InstantPoolLauncher pools forever (there is no function that
/// moves them) and receives those pools' fee hook: every swap sends `feeBps` of its input here.
/// Each fee is split 50/50: the platform half is forwarded to the platform fee recipient at once,
/// the creator half accrues until the creator claims it. Fees arrive in whichever token was swapped
/// in: the quote asset on buys, the launched token on sells.
contract FeeLocker is IFeeReceiver {
    /// @notice Creator's share of each fee, in basis points.
    uint256 public constant CREATOR_SHARE_BPS = 5000;

    struct Position {
        address creator;
        address pair;
        address quote;
        uint256 quoteFeesEarned;
        uint256 quoteFeesClaimed;
        uint256 tokenFeesEarned;
        uint256 tokenFeesClaimed;
    }

    /// @notice The InstantPoolLauncher that created this locker; the only one that can register pools.
    address public immutable launcher;
    address public immutable platformFeeRecipient;
    /// @notice Launched token of a registered pair (zero if not registered).
    mapping(address => address) public tokenOfPair;
    mapping(address => Position) private positions;

    event PositionLocked(address indexed token, address indexed pair, address indexed creator, uint256 liquidity);
    event FeesAccrued(
        address indexed token, address indexed feeToken, uint256 amount, uint256 creatorShare, uint256 platformShare
    );
    event CreatorFeesClaimed(
        address indexed token, address indexed creator, address indexed to, uint256 quoteAmount, uint256 tokenAmount
    );

    constructor(address platformFeeRecipient_) {
        require(platformFeeRecipient_ != address(0), "FeeLocker: zero fee recipient");
        launcher = msg.sender;
        platformFeeRecipient = platformFeeRecipient_;
    }

    /// @notice Records a launched pool whose LP tokens this locker now holds. Launcher only.
    function register(address token, address pair, address quote, address creator) external {
        require(msg.sender == launcher, "FeeLocker: caller is not the launcher");
        require(positions[token].pair == address(0), "FeeLocker: already registered");
        positions[token] = Position(creator, pair, quote, 0, 0, 0, 0);
        tokenOfPair[pair] = token;
        emit PositionLocked(token, pair, creator, IERC20(pair).balanceOf(address(this)));
    }

    /// @inheritdoc IFeeReceiver
    /// @dev Only registered pairs; they have already transferred `amount` of `feeToken` here.
    function onSwapFee(address feeToken, uint256 amount) external {
        address token = tokenOfPair[msg.sender];
        require(token != address(0), "FeeLocker: caller is not a registered pair");
        Position storage p = positions[token];
        uint256 creatorShare = (amount * CREATOR_SHARE_BPS) / 10_000;
        uint256 platformShare = amount - creatorShare;
        if (feeToken == token) p.tokenFeesEarned += creatorShare;
        else p.quoteFeesEarned += creatorShare;
        if (platformShare > 0) TransferHelper.safeTransfer(feeToken, platformFeeRecipient, platformShare);
        emit FeesAccrued(token, feeToken, amount, creatorShare, platformShare);
    }

    /// @notice Sends all unclaimed creator fees of `token` (quote and token) to `to`. Creator only.
    function claim(address token, address to) external returns (uint256 quoteAmount, uint256 tokenAmount) {
        Position storage p = positions[token];
        require(p.pair != address(0), "FeeLocker: unknown token");
        require(msg.sender == p.creator, "FeeLocker: caller is not the creator");
        require(to != address(0), "FeeLocker: zero recipient");
        quoteAmount = p.quoteFeesEarned - p.quoteFeesClaimed;
        tokenAmount = p.tokenFeesEarned - p.tokenFeesClaimed;
        require(quoteAmount > 0 || tokenAmount > 0, "FeeLocker: nothing to claim");
        p.quoteFeesClaimed = p.quoteFeesEarned;
        p.tokenFeesClaimed = p.tokenFeesEarned;
        if (quoteAmount > 0) TransferHelper.safeTransfer(p.quote, to, quoteAmount);
        if (tokenAmount > 0) TransferHelper.safeTransfer(token, to, tokenAmount);
        emit CreatorFeesClaimed(token, msg.sender, to, quoteAmount, tokenAmount);
    }

    /// @notice Unclaimed creator fees of `token`.
    function claimable(address token) external view returns (uint256 quoteAmount, uint256 tokenAmount) {
        Position storage p = positions[token];
        return (p.quoteFeesEarned - p.quoteFeesClaimed, p.tokenFeesEarned - p.tokenFeesClaimed);
    }

    /// @notice Full position of `token` (all zero for an unknown token).
    function getPosition(address token) external view returns (Position memory) {
        return positions[token];
    }

    /// @notice LP tokens of `token`'s pool locked here.
    function lockedLiquidity(address token) external view returns (uint256) {
        address pair = positions[token].pair;
        return pair == address(0) ? 0 : IERC20(pair).balanceOf(address(this));
    }
}
